package main

import (
	"context"
	"sync"
)

// mediaCache prepares each media item of an account once per run, however
// many groups send it: the first group to need it prepares it, the others
// wait for that result, success or error.
type mediaCache struct {
	sender sender

	mu       sync.Mutex
	items    map[[2]string]*mediaItem // by account and source
	prepared map[string]int           // preparations started, by account
}

type mediaItem struct {
	done   chan struct{}
	handle string
	err    error
}

func newMediaCache(s sender) *mediaCache {
	return &mediaCache{sender: s, items: map[[2]string]*mediaItem{}, prepared: map[string]int{}}
}

// get returns the handle of the account's media item src, preparing it if
// this is the first request in the run. A preparation cut short by ctx is
// forgotten, so the next request prepares again.
func (c *mediaCache) get(ctx context.Context, account, src string) (string, error) {
	key := [2]string{account, src}
	c.mu.Lock()
	it, ok := c.items[key]
	if !ok {
		it = &mediaItem{done: make(chan struct{})}
		c.items[key] = it
		c.prepared[account]++
	}
	c.mu.Unlock()
	if !ok {
		it.handle, it.err = c.sender.PrepareMedia(ctx, account, src)
		if ctx.Err() != nil {
			c.mu.Lock()
			delete(c.items, key)
			c.mu.Unlock()
		}
		close(it.done)
	}
	select {
	case <-it.done:
		return it.handle, it.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// count returns how many media preparations the run started for account.
func (c *mediaCache) count(account string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prepared[account]
}
