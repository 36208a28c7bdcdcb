package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
)

// Extend implements Store.
func (m *Memory) Extend(ctx context.Context, l Lease, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ttl <= 0 {
		return fmt.Errorf("store: Extend needs a positive ttl, got %v", ttl)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.nano.Now()
	q, k, i, err := m.current(l, now)
	if err != nil {
		return err
	}
	k.runs[i].at = timing.AddNanos(now, ttl)
	k.reschedule(q, now, true)
	return nil
}

// Finish implements Store. A Drop keeps the batch as a dead letter.
func (m *Memory) Finish(ctx context.Context, l Lease, o Outcome) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if o.Kind < Ack || o.Kind > Hold {
		return false, fmt.Errorf("store: unknown OutcomeKind %d", o.Kind)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.nano.Now()
	q, k, i, err := m.current(l, now)
	if err != nil {
		return false, err
	}
	r := &k.runs[i]
	more := true
	switch o.Kind {
	case Ack, Drop:
		off := k.offset(i)
		if o.Kind == Drop {
			m.bury(q, k, off, r.n, r.attempt, o.Err, now)
		}
		q.values -= r.n
		k.cut(off, r.n)
		k.runs = slices.Delete(k.runs, i, i+1)
		k.leased--
		if len(k.vals) == 0 {
			q.forget(k, now)
			more = false
		}
	case Retry, Defer:
		r.out, r.retry, r.bump = false, o.Kind == Retry, o.Kind == Retry
		if o.Kind == Retry {
			r.err = o.Err
		}
		r.at = timing.AddNanos(now, max(o.After, 0))
		k.leased--
	case Hold:
		r.out, r.err = false, o.Err
		k.leased--
		k.held, k.heldSince = true, now
	}
	if more {
		k.reschedule(q, now, true) // behind the keys already waiting
	}
	q.wake()
	return more, nil
}

// cut removes the n values of k from off on: in constant time from the
// head, else in O(values behind them).
func (k *key) cut(off, n int) {
	if off == 0 {
		clear(k.vals[:n])
		k.vals = k.vals[n:]
		return
	}
	k.vals = slices.Delete(k.vals, off, off+n)
}

// current returns the queue and key of l, and the index of l's run, if l
// is out on a lease of the key that has not lapsed by now, else
// ErrLeaseLost.
func (m *Memory) current(l Lease, now int64) (*queue, *key, int, error) {
	q := m.queue(l.Queue, false)
	if q == nil {
		return nil, nil, 0, ErrLeaseLost
	}
	k := q.keys[l.Key]
	if k == nil || k.leased == 0 {
		return nil, nil, 0, ErrLeaseLost
	}
	k.settle(now)
	for i, r := range k.runs {
		if r.out && r.fence == l.Fence {
			return q, k, i, nil
		}
	}
	return nil, nil, 0, ErrLeaseLost
}
