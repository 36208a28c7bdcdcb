package store

import (
	"context"
	"fmt"
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
	q, k, err := m.current(l, now)
	if err != nil {
		return err
	}
	q.schedule(k, timing.AddNanos(now, ttl))
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
	q, k, err := m.current(l, now)
	if err != nil {
		return false, err
	}
	k.settle(now)
	more := true
	switch o.Kind {
	case Ack, Drop:
		if o.Kind == Drop {
			m.bury(q, k, o.Err, now)
		}
		clear(k.vals[:k.batch])
		k.vals = k.vals[k.batch:]
		q.values -= k.batch
		k.phase, k.batch, k.attempt, k.err = idle, 0, 1, ""
		if len(k.vals) == 0 {
			q.forget(k)
			more = false
			break
		}
		q.schedule(k, k.readyAt(now)) // behind the keys already waiting
	case Retry, Defer:
		if o.Kind == Retry {
			k.attempt++
			k.err = o.Err
		}
		k.phase, k.retry = idle, o.Kind == Retry
		q.schedule(k, timing.AddNanos(now, max(o.After, 0)))
	case Hold:
		k.phase, k.since, k.err = held, now, o.Err
		q.unschedule(k)
	}
	q.wake()
	return more, nil
}

// current returns the queue and key of l if l is the key's lease and has
// not lapsed by now, else ErrLeaseLost.
func (m *Memory) current(l Lease, now int64) (*queue, *key, error) {
	q := m.queue(l.Queue, false)
	if q == nil {
		return nil, nil, ErrLeaseLost
	}
	k := q.keys[l.Key]
	if k == nil || k.phase != leased || k.fence != l.Fence || k.at <= now {
		return nil, nil, ErrLeaseLost
	}
	return q, k, nil
}
