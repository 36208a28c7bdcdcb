package store

import (
	"context"
	"time"
)

// Wait implements Store. It returns at once while a key of queue is ready,
// and otherwise sleeps until the earlier of d and the queue's next ready
// time, so that no change made since the caller's Claim can be missed.
func (m *Memory) Wait(ctx context.Context, queue string, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	m.mu.Lock()
	q := m.queue(queue, true) // so that the first Add wakes this Wait
	next := q.next(m.nano.Now())
	if next == 0 {
		m.mu.Unlock()
		return nil
	}
	if q.changed == nil {
		q.changed = make(chan struct{})
	}
	changed := q.changed
	m.mu.Unlock()

	var tick <-chan time.Time
	if d = min(d, next); d < Never {
		t := m.clk.NewTimer(d)
		defer t.Stop()
		tick = t.C()
	}
	select {
	case <-changed:
	case <-tick:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// wake ends every Wait on q.
func (q *queue) wake() {
	if q.changed != nil {
		close(q.changed)
		q.changed = nil
	}
}
