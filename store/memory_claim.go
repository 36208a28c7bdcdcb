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
	if err := p.validate(); err != nil {
		return nil, 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil || q.paused {
		return nil, Never, nil
	}
	now := m.nano.Now()
	if q.fair != nil {
		return m.claimFair(queue, q, p, now), q.next(now), nil
	}
	var leases []Lease
	for len(leases) < p.Keys {
		k, at, ok := q.top()
		if !ok || at > now {
			break
		}
		q.sched.Pop()
		k.order = 0 // its live entry is gone
		k.settle(now)
		if k.isReady(now) && (!p.KeyRate.On() || k.takeToken(p.KeyRate, now)) {
			leases = append(leases, m.lease(queue, k, p, now))
		}
		k.resched(q, now) // a key that may lease again goes to the tail; one without a token, at its token's time
	}
	return leases, q.next(now), nil
}

// lease hands out k, which is settled and ready: its first kept run
// again, or else a new run of its free values, up to p.MaxBatch.
func (m *Memory) lease(queue string, k *key, p ClaimParams, now int64) Lease {
	i := k.kept()
	if i < 0 {
		n := k.ready()
		if p.MaxBatch > 0 && n > p.MaxBatch {
			n = p.MaxBatch
		}
		n = k.dueOf(k.inRuns(), n, now) // a key is ready once its next value is due: n > 0
		k.runs = append(k.runs, run{n: n, bump: true})
		i = len(k.runs) - 1
	}
	r := &k.runs[i]
	if r.bump {
		r.attempt++
		r.bump = false
	}
	m.fence++
	r.out, r.retry, r.fence = true, false, m.fence
	r.at, r.since, r.holder = timing.AddNanos(now, p.TTL), now, p.Holder
	k.leased++
	k.fence, k.limit, k.elig = m.fence, max(p.PerKey, 1), false
	off := k.offset(i)
	vals := make([][]byte, r.n)
	for j, v := range k.vals[off : off+r.n] {
		vals[j] = bytes.Clone(v.b)
	}
	return Lease{
		Queue:   queue,
		Key:     k.name,
		Values:  vals,
		Attempt: r.attempt,
		Fence:   r.fence,
		First:   m.nano.Time(k.vals[off].at),
	}
}

// offset returns the index in k.vals of the first value of run i.
func (k *key) offset(i int) int {
	off := 0
	for _, r := range k.runs[:i] {
		off += r.n
	}
	return off
}

// next returns how long until the first key of q is ready: 0 if one is,
// Never if none is scheduled or only at the end of time, or q is paused.
func (q *queue) next(now int64) time.Duration {
	if q.fair != nil && !q.paused {
		if _, _, ok := q.fair.peek(); ok {
			return 0
		}
	}
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
	if err := p.validate(); err != nil {
		return false, nil, 0, err
	}
	more, err := m.Finish(ctx, l, o)
	if err != nil {
		return false, nil, 0, err
	}
	// The lease ended: a ctx that ended meanwhile does not undo it.
	leases, next, err := m.Claim(context.WithoutCancel(ctx), l.Queue, p)
	return more, leases, next, err
}

// validate returns an error naming what of p Memory does not take.
func (p ClaimParams) validate() error {
	if p.Keys < 1 || p.MaxBatch < 0 || p.TTL <= 0 || p.PerKey < 0 {
		return fmt.Errorf("store: ClaimParams needs Keys >= 1, MaxBatch >= 0, TTL > 0 and PerKey >= 0, got %+v", p)
	}
	return p.KeyRate.Validate()
}
