package redismutex

import (
	"context"
	"errors"
	"slices"
	"time"
)

// A waiter is a LockContext call waiting for its key.
type waiter struct {
	wake chan struct{} // holds one wake-up
}

func (w *waiter) notify() {
	select {
	case w.wake <- struct{}{}:
	default: // one is pending already
	}
}

// LockContext takes the lock of key, waiting as long as another holder has
// it, until ctx ends (it then returns ctx.Err()) or the Locker is closed
// (ErrClosed). An error of the client ends it too.
//
// It does not poll. The LockContext calls of one Locker waiting for one
// key queue in arrival order, and only the first of them asks Redis: it
// tries to take the lock, which marks the lock as waited for and tells
// how long it has left, then sleeps until the lock is released (its
// release publishes the key on a channel that the Locker listens to,
// which wakes the first waiter of each Locker waiting for it) or its time
// runs out, and tries again. The others wait for their turn in the queue.
// A Locker first subscribes to the channel when a LockContext has to
// wait, and stays subscribed until Close. There is no fairness across
// Lockers: whichever tries first after a release takes the lock.
func (m *Locker) LockContext(ctx context.Context, key string) (*Lock, error) {
	if m.closed.Load() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w := m.join(key)
	defer m.leave(key, w)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		if m.first(key, w) {
			l, left, err := m.acquire(ctx, key, true)
			if !errors.Is(err, ErrLocked) {
				return l, err
			}
			m.listen()
			// Redis rounds the time left down to the millisecond.
			timer.Reset(left + time.Millisecond)
		}
		select {
		case <-w.wake:
		case <-timer.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-m.ctx.Done():
			return nil, ErrClosed
		}
		timer.Stop()
	}
}

// join queues w for key.
func (m *Locker) join(key string) *waiter {
	w := &waiter{wake: make(chan struct{}, 1)}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.waiting[key] = append(m.waiting[key], w)
	return w
}

// leave takes w out of key's queue, and wakes the next if w was first.
func (m *Locker) leave(key string, w *waiter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.waiting[key]
	i := slices.Index(q, w)
	q = slices.Delete(q, i, i+1)
	if len(q) == 0 {
		delete(m.waiting, key)
		return
	}
	m.waiting[key] = q
	if i == 0 {
		q[0].notify()
	}
}

// first reports whether w is first in key's queue.
func (m *Locker) first(key string, w *waiter) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waiting[key][0] == w
}

// wake wakes the first waiter for key, if any.
func (m *Locker) wake(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if q := m.waiting[key]; len(q) > 0 {
		q[0].notify()
	}
}

// wakeAll wakes the first waiter for every key.
func (m *Locker) wakeAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, q := range m.waiting {
		q[0].notify()
	}
}
