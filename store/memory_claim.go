package store

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
)

// Claim implements Store. A lease whose TTL passed is leased again here,
// in its place in the ready order: when it lapsed.
func (m *Memory) Claim(ctx context.Context, queue string, p ClaimParams) ([]Lease, time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if p.Keys < 1 || p.MaxBatch < 0 || p.TTL <= 0 {
		return nil, 0, fmt.Errorf("store: ClaimParams needs Keys >= 1, MaxBatch >= 0 and TTL > 0, got %+v", p)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil || q.paused {
		return nil, Never, nil
	}
	now := m.nano.Now()
	var leases []Lease
	for len(leases) < p.Keys {
		k, at, ok := q.top()
		if !ok || at > now {
			break
		}
		q.sched.Pop()
		leases = append(leases, m.lease(queue, q, k, p, now))
	}
	return leases, q.next(now), nil
}

// lease hands out k, which is ready.
func (m *Memory) lease(queue string, q *queue, k *key, p ClaimParams, now int64) Lease {
	if k.phase == leased {
		k.attempt++ // the lease lapsed: this is the batch's next attempt
	}
	k.settle(now)
	n := k.batch
	if n == 0 {
		n = k.ready()
		if p.MaxBatch > 0 && n > p.MaxBatch {
			n = p.MaxBatch
		}
		n = k.dueOf(n, now) // a key is ready once its first value is due: n > 0
	}
	m.fence++
	k.phase, k.batch, k.fence, k.retry = leased, n, m.fence, false
	k.since, k.holder = now, p.Holder
	q.schedule(k, timing.AddNanos(now, p.TTL))
	vals := make([][]byte, n)
	for i, v := range k.vals[:n] {
		vals[i] = bytes.Clone(v.b)
	}
	return Lease{
		Queue:   queue,
		Key:     k.name,
		Values:  vals,
		Attempt: k.attempt,
		Fence:   k.fence,
		First:   m.nano.Time(k.vals[0].at),
	}
}

// next returns how long until the first key of q is ready: 0 if one is,
// Never if none is scheduled or only at the end of time, or q is paused.
func (q *queue) next(now int64) time.Duration {
	_, at, ok := q.top()
	switch {
	case !ok || at == math.MaxInt64 || q.paused:
		return Never
	case at <= now:
		return 0
	}
	return time.Duration(at - now)
}

var _ FinishClaimer = (*Memory)(nil)

// FinishAndClaim implements FinishClaimer: a Finish, then a Claim. Memory
// has no round trip to save; it implements the interface so that the path
// of a Runner that uses it can be tested without a server.
func (m *Memory) FinishAndClaim(ctx context.Context, l Lease, o Outcome, p ClaimParams) (bool, []Lease, time.Duration, error) {
	if p.Keys < 1 || p.MaxBatch < 0 || p.TTL <= 0 {
		return false, nil, 0, fmt.Errorf("store: ClaimParams needs Keys >= 1, MaxBatch >= 0 and TTL > 0, got %+v", p)
	}
	more, err := m.Finish(ctx, l, o)
	if err != nil {
		return false, nil, 0, err
	}
	// The lease ended: a ctx that ended meanwhile does not undo it.
	leases, next, err := m.Claim(context.WithoutCancel(ctx), l.Queue, p)
	return more, leases, next, err
}
