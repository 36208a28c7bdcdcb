package redisstore

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/store"
)

const (
	// shortWait is the longest Wait that only sleeps: a wake-up it misses
	// is late by no more than this.
	shortWait = time.Millisecond
	// idleBlock bounds one blocking pop, so that a worker that waits for
	// ever still checks in every idleBlock; it also bounds a Wait whose
	// own wake-up could not be sent.
	idleBlock = 30 * time.Second
	// wakeTimeout bounds the command that ends a Wait's blocking pop.
	wakeTimeout = 5 * time.Second
)

// Wait blocks until d has passed, ctx ended (ctx.Err()), the Store was
// closed (store.ErrClosed), or a script woke the queue; see store.Store.
//
// A local timer measures d: Redis checks the timeouts of blocking commands
// only hz times a second, 100 ms apart by default, which is too coarse for
// a debounce. The blocking pop (BZPOPMIN on the queue's wake key and on a
// key of this Wait's own) only hears about new work; when the timer fires,
// or ctx ends, a second command adds to the Wait's own key to end the pop.
// A Wait of at most a millisecond only sleeps. Each blocked Wait holds a
// connection of the client's pool.
func (s *Store) Wait(ctx context.Context, queue string, d time.Duration) error {
	n, err := s.names(ctx, queue)
	if err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	if d <= shortWait {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-s.ctx.Done():
			return store.ErrClosed
		}
	}
	if !s.startWait() {
		return store.ErrClosed
	}
	defer s.waits.Done()

	own := n.prefix + "w:" + s.id + ":" + strconv.FormatUint(s.seq.Add(1), 10)
	w := &waker{c: s.c, key: own, done: make(chan struct{})}
	timer := time.AfterFunc(d, w.wake)
	stopCtx := context.AfterFunc(ctx, w.wake)
	stopClose := context.AfterFunc(s.ctx, w.wake)

	block := idleBlock
	if d < idleBlock-time.Second {
		// The timer ends the pop; this is the backstop if it cannot.
		block = d.Truncate(time.Second) + 2*time.Second
	}
	popped, err := s.c.BZPopMin(context.WithoutCancel(ctx), block, n.wake(), own).Result()

	// Stopped in time, a wake-up never started; otherwise wait for it,
	// and take back its element if the pop did not.
	stoppedAll := timer.Stop()
	stoppedAll = stopCtx() && stoppedAll
	stoppedAll = stopClose() && stoppedAll
	if !stoppedAll {
		<-w.done
		if popped == nil || popped.Key != own {
			w.clear()
		}
	}
	switch {
	case s.ctx.Err() != nil:
		return store.ErrClosed
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil && !errors.Is(err, redis.Nil):
		return wrap("wait", err)
	}
	return nil
}

// startWait counts a Wait in, unless the Store is closed.
func (s *Store) startWait() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.waits.Add(1)
	return true
}

// A waker ends one Wait's blocking pop by adding to the Wait's own key.
type waker struct {
	c    redis.UniversalClient
	key  string
	once sync.Once
	done chan struct{} // closed once the wake-up was sent, or failed
}

func (w *waker) wake() {
	w.once.Do(func() {
		defer close(w.done)
		ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
		defer cancel()
		// The expiry cleans up after a Wait that died before clear.
		_, _ = w.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, w.key, redis.Z{Member: "w"})
			p.PExpire(ctx, w.key, time.Minute)
			return nil
		})
	})
}

// clear removes the element of a wake-up that came too late to be popped.
func (w *waker) clear() {
	ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
	defer cancel()
	w.c.Del(ctx, w.key)
}
