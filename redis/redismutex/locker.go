package redismutex

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Locker takes locks of one Name in Redis, one per key: see the package
// doc for what a lock promises. Create one with New; it is safe for
// concurrent use. It owns goroutines (one that times the renewals of its
// locks, once it took one, a goroutine per renewal, and a Pub/Sub
// receiver once a LockContext waited): call Close when done with it.
type Locker struct {
	c   redis.UniversalClient
	ttl time.Duration
	ms  any // ttl in milliseconds, an argument of the functions

	names

	// ctx is the parent of every Lock's Context; Close cancels it, with
	// cause ErrClosed, which also ends the waits of LockContext.
	ctx    context.Context
	cancel context.CancelCauseFunc
	closed atomic.Bool
	tasks  tasks
	leases *renewer

	mu      sync.Mutex
	waiting map[string][]*waiter // by key, the LockContext calls waiting, in arrival order
	sub     *redis.PubSub        // nil until a LockContext first waits
}

// New returns a Locker that takes its locks through c, configured by cfg,
// once it made sure, within ctx, that c's server can hold them: that it
// answers, is Redis 7.0 or later, and lets c's user load and call the
// package's functions, which it loads. Otherwise, or if cfg is not valid,
// it returns an error that names the server's address, or the field, and
// what is wrong. The Locker does not own c: close c after the Locker.
func New(ctx context.Context, c redis.UniversalClient, cfg Config) (*Locker, error) {
	if c == nil {
		return nil, errors.New("redismutex: nil client")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := lib.Check(ctx, c); err != nil {
		return nil, fmt.Errorf("redismutex: %w", err)
	}
	life, cancel := context.WithCancelCause(context.Background())
	m := &Locker{
		c: c, ttl: cfg.TTL, ms: cfg.TTL.Milliseconds(),
		names: newNames(cfg.Prefix, cfg.Name),
		ctx:   life, cancel: cancel, waiting: map[string][]*waiter{},
	}
	m.leases = newRenewer(cfg.TTL, &m.tasks)
	return m, nil
}

// Close cancels the Context of every Lock the Locker holds, with cause
// ErrClosed, since nothing renews them any more; ends the LockContext
// calls waiting, which return ErrClosed; and waits for the Locker's
// goroutines to end (a renewal in flight, which the client's timeouts
// bound, and the Pub/Sub receiver). Later calls of TryLock, LockContext and Do return
// ErrClosed. The locks stay in Redis until their TTL runs out, or until
// Unlock, which still works. Close leaves the client open, and is safe to
// call more than once.
func (m *Locker) Close() error {
	if !m.tasks.close() {
		m.tasks.wait()
		return nil
	}
	m.closed.Store(true)
	m.cancel(ErrClosed)
	m.mu.Lock()
	sub := m.sub
	m.mu.Unlock()
	if sub != nil {
		_ = sub.Close() // ends the receiver's read
	}
	m.leases.close()
	m.tasks.wait()
	return nil
}

// TryLock takes the lock of key if it is free, in one round trip, and
// returns ErrLocked if another holder has it. It does not wait, nor queue
// behind the LockContext calls of this Locker that wait for key.
func (m *Locker) TryLock(ctx context.Context, key string) (*Lock, error) {
	l, _, err := m.acquire(ctx, key, false)
	return l, err
}

// acquire runs acquire.lua once. If the lock is held it returns ErrLocked
// and how long the lock has left (the TTL if it never expires); wait
// marks the lock, so that its release wakes the Lockers waiting for it.
func (m *Locker) acquire(ctx context.Context, key string, wait bool) (*Lock, time.Duration, error) {
	if m.closed.Load() {
		return nil, 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	token := rand.Text()
	name := m.lockKey(key)
	sent := time.Now()
	var cmd *redis.Cmd
	if wait {
		cmd = acquireFn.run(ctx, m.c, 2, name, m.fence, token, m.ms, "wait")
	} else {
		cmd = acquireFn.run(ctx, m.c, 2, name, m.fence, token, m.ms)
	}
	n, err := cmd.Int64()
	switch {
	case err != nil:
		return nil, 0, fmt.Errorf("redismutex: lock %q: %w", key, err)
	case n == 0:
		return nil, m.ttl, ErrLocked
	case n < 0:
		return nil, time.Duration(-n) * time.Millisecond, ErrLocked
	}
	l := &Lock{m: m, key: key, name: name, token: token, fence: uint64(n)}
	m.leases.add(&l.lease, l, sent)
	if m.closed.Load() { // Close ran meanwhile: nothing would renew it
		_ = l.Unlock(context.WithoutCancel(ctx))
		return nil, 0, ErrClosed
	}
	return l, 0, nil
}
