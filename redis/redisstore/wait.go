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
	// wakeTimeout bounds the commands that end a Wait's blocking pop.
	wakeTimeout = 5 * time.Second
)

// Wait blocks until d has passed, ctx ended (ctx.Err()), the Store was
// closed (store.ErrClosed), or a script woke the queue; see store.Store.
//
// A local timer measures d: Redis checks the timeouts of blocking commands
// only hz times a second, 100 ms apart by default, which is too coarse for
// a debounce. The blocking pop (BZPOPMIN on the queue's wake key and on a
// key of this Wait's own) only hears about new work, and runs in a
// goroutine of its own. When the timer fires, Wait returns at once, for
// the caller to claim without waiting another round trip, and the pop is
// ended behind it, by a command that adds to the Wait's own key (Close
// waits for that); when ctx ends or the Store closes, Wait returns once
// the pop ended. A pop that ends after its Wait stopped listening and took
// the queue's wake-up gives it back, for another worker. A Wait of at most
// a millisecond only sleeps. Each blocked Wait holds a connection of the
// client's pool.
func (s *Store) Wait(ctx context.Context, queue string, d time.Duration) error {
	q, err := s.queue(ctx, queue)
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
	p := &pop{c: s.c, wake: q.wake, own: q.prefix + "w:" + s.id + ":" + strconv.FormatUint(s.seq.Add(1), 10), done: make(chan struct{})}
	block := idleBlock
	if d < idleBlock-time.Second {
		// The timer ends the pop; this is the backstop if it cannot.
		block = d.Truncate(time.Second) + 2*time.Second
	}
	go func() {
		defer s.waits.Done()
		p.run(block)
	}()

	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.done:
		if p.err != nil && !errors.Is(p.err, redis.Nil) {
			return wrap("wait", p.err)
		}
		return nil
	case <-timer.C:
		// The pop ends in its own goroutine; the caller claims meanwhile.
		p.stop(false)
		return nil
	case <-ctx.Done():
		p.stopAndWait()
		return ctx.Err()
	case <-s.ctx.Done():
		p.stopAndWait()
		return store.ErrClosed
	}
}

// startWait counts a Wait's pop in, unless the Store is closed.
func (s *Store) startWait() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.waits.Add(1)
	return true
}

// A pop is the blocking pop of one Wait, on the queue's wake key and on a
// key of the Wait's own, which stop adds to.
type pop struct {
	c    redis.UniversalClient
	wake string // the queue's wake key
	own  string // the Wait's own key
	done chan struct{}

	mu       sync.Mutex
	returned bool          // BZPOPMIN returned
	stopped  chan struct{} // non-nil once the Wait stopped listening: closed once stop's command went

	// Set before done is closed.
	popped string // the key the pop took an element of, "" if none
	err    error
}

// run blocks in BZPOPMIN for at most block. If the Wait stopped listening
// meanwhile, it then cleans up: a wake-up of the queue it took goes back,
// for another worker, and the element stop added to the own key, if the
// pop did not take it, is removed.
func (p *pop) run(block time.Duration) {
	z, err := p.c.BZPopMin(context.Background(), block, p.wake, p.own).Result()
	if z != nil {
		p.popped = z.Key
	}
	p.err = err
	p.mu.Lock()
	p.returned = true
	stopped := p.stopped
	p.mu.Unlock()
	if stopped != nil {
		<-stopped
		p.cleanUp()
	}
	close(p.done)
}

// stop has the pop end, in a goroutine of its own so that the Wait can
// return at once: it adds to the Wait's own key, which the pop then takes.
// If the pop returned already, its result stands for the Wait's caller,
// who claims next; but a caller that leaves without claiming (leaving)
// gives back the queue's wake-up the pop took.
func (p *pop) stop(leaving bool) {
	p.mu.Lock()
	if p.returned {
		p.mu.Unlock()
		<-p.done
		if leaving && p.popped == p.wake {
			ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
			defer cancel()
			p.c.ZAdd(ctx, p.wake, redis.Z{Member: "w"})
		}
		return
	}
	stopped := make(chan struct{})
	p.stopped = stopped
	p.mu.Unlock()
	go func() {
		defer close(stopped)
		ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
		defer cancel()
		// The expiry cleans up after a process that died before run did.
		_, _ = p.c.Pipelined(ctx, func(pl redis.Pipeliner) error {
			pl.ZAdd(ctx, p.own, redis.Z{Member: "w"})
			pl.PExpire(ctx, p.own, time.Minute)
			return nil
		})
	}()
}

// stopAndWait stops the pop for a caller that leaves, and returns once
// the pop ended and cleaned up.
func (p *pop) stopAndWait() {
	p.stop(true)
	<-p.done
}

// cleanUp, after a pop that returned once its Wait stopped listening,
// gives back the queue's wake-up the pop took, and removes the element
// stop added to the own key if the pop did not take it.
func (p *pop) cleanUp() {
	ctx, cancel := context.WithTimeout(context.Background(), wakeTimeout)
	defer cancel()
	if p.popped == p.wake {
		p.c.ZAdd(ctx, p.wake, redis.Z{Member: "w"})
	}
	if p.popped != p.own {
		p.c.Del(ctx, p.own)
	}
}
