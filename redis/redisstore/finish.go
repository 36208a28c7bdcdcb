package redisstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/store"
)

var _ store.FinishClaimer = (*Store)(nil)

// Finish ends l as o says, in one script that checks its fence and expiry
// first; see store.Store. A dropped batch becomes a dead letter; the
// error of a retried or held one stays with its key, for Key and Keys,
// until its head batch is acked, dropped or released. Finish
// calls on one queue may share a script with each other and with
// FinishAndClaim calls (see FinishAndClaim).
func (s *Store) Finish(ctx context.Context, l store.Lease, o store.Outcome) (bool, error) {
	more, _, _, err := s.finish(ctx, l, o, store.ClaimParams{})
	return more, err
}

// FinishAndClaim ends l as o says and claims ready keys of its queue with
// p, in one script and one round trip; see store.FinishClaimer.
//
// The calls on one queue that come while another's script is on its way
// to Redis wait for it, and then share the next script: it ends their
// leases in the order they came, then claims for all of them at once, and
// gives each its share of the leases, in that order. Under load, one
// round trip and one script thus serve several workers; a call that comes
// alone goes once the goroutines ready to run had their turn (see
// combiner). Ending the leases first and claiming then is what
// the calls would do one after the other, but for the keys they end, which
// go behind the keys already waiting before any of them claims.
func (s *Store) FinishAndClaim(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) (bool, []store.Lease, time.Duration, error) {
	if err := checkClaim(p); err != nil {
		return false, nil, 0, err
	}
	return s.finish(ctx, l, o, p)
}

func (s *Store) finish(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) (bool, []store.Lease, time.Duration, error) {
	q, err := s.queue(ctx, l.Queue)
	if err != nil {
		return false, nil, 0, err
	}
	if o.Kind < store.Ack || o.Kind > store.Hold {
		return false, nil, 0, fmt.Errorf("redisstore: Finish with unknown outcome kind %d", o.Kind)
	}
	c := newFinishCall(ctx, l, o, p)
	q.finishes.do(c, func(batch []*finishCall) { s.finishBatch(q, batch) })
	more, leases, next, err := c.more, c.leases, c.next, c.err
	c.free()
	return more, leases, next, err
}

// maxCombined bounds the calls one finish script serves.
const maxCombined = 64

// A finishCall is one Finish or FinishAndClaim (p.Keys > 0) call, and its
// results once done signalled.
type finishCall struct {
	ctx  context.Context
	l    store.Lease
	o    store.Outcome
	p    store.ClaimParams
	done chan struct{} // signalled once, when the results are set or lead is
	lead bool          // done signalled to have the call send the next script

	more   bool
	leases []store.Lease
	next   time.Duration
	err    error
}

// finishCalls holds the finishCalls that ended, with their done channels,
// for the next calls: a call's own would be two allocations more per
// lease.
var finishCalls = sync.Pool{New: func() any { return &finishCall{done: make(chan struct{}, 1)} }}

// newFinishCall returns a finishCall, from finishCalls, for l, o and p.
func newFinishCall(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) *finishCall {
	c := finishCalls.Get().(*finishCall)
	c.ctx, c.l, c.o, c.p = ctx, l, o, p
	return c
}

// free returns c to finishCalls, once its caller read its results and
// its done signal was taken: nothing of it is left for the next call.
func (c *finishCall) free() {
	*c = finishCall{done: c.done}
	finishCalls.Put(c)
}

// signal signals c's done, which its caller waits for, once.
func (c *finishCall) signal() { c.done <- struct{}{} }

// fits reports whether c can share a script whose claim has params p
// (Keys 0: no claim yet): one whose claim leases as c's would, with the
// same MaxBatch, TTL, Holder, PerKey and KeyRate.
func (c *finishCall) fits(p store.ClaimParams) bool {
	return c.p.Keys == 0 || p.Keys == 0 || (c.p.MaxBatch == p.MaxBatch && c.p.TTL == p.TTL && c.p.Holder == p.Holder && perKey(c.p) == perKey(p) && keyRate(c.p.KeyRate) == keyRate(p.KeyRate))
}

// perKey is the most leases of one key at once that p asks for: PerKey,
// and 1 for 0.
func perKey(p store.ClaimParams) int { return max(p.PerKey, 1) }

// A combiner lets at most one finish script of a queue be on its way at a
// time, and gathers the calls that come meanwhile into the next. There is
// no goroutine of its own: the call that finds no script on its way sends
// one. When it is back, the sender hands each call of its script its
// results, and the last of those calls to see them hands the calls that
// wait to the first of them, which sends theirs at once: by then the
// goroutines that the script's results woke before it ran, and with the
// processors busy, their next calls are waiting too and go in this
// script, which makes fewer, larger scripts, each costing Redis and the
// process less per call than two would. A call that finds no script on
// its way first yields its processor once (runtime.Gosched), so that the
// goroutines ready to run go ahead and join it; with a processor idle,
// those run there, nothing is ahead, and it sends at once.
type combiner struct {
	mu      sync.Mutex
	busy    bool          // a script is on its way, or its calls have not all seen their results
	waiting []*finishCall // in the order they came
	unseen  atomic.Int32  // the calls of the script back that have not seen their results
}

// do runs c, in a script that send runs for a batch of calls, and returns
// once c's results are set.
func (cb *combiner) do(c *finishCall, send func([]*finishCall)) {
	cb.mu.Lock()
	cb.waiting = append(cb.waiting, c)
	if cb.busy {
		cb.mu.Unlock()
		select {
		case <-c.done:
		case <-c.ctx.Done():
			cb.mu.Lock()
			if i := slices.Index(cb.waiting, c); i >= 0 && !c.lead {
				// Not sent: it changed nothing.
				cb.waiting = slices.Delete(cb.waiting, i, i+1)
				cb.mu.Unlock()
				c.err = c.ctx.Err()
				return
			}
			cb.mu.Unlock()
			<-c.done
		}
		if !c.lead {
			// A call of the script back, which has its results.
			if cb.unseen.Add(-1) == 0 {
				cb.mu.Lock()
				cb.handOn()
				cb.mu.Unlock()
			}
			return
		}
		cb.mu.Lock()
	} else {
		cb.busy = true
		cb.mu.Unlock()
		runtime.Gosched()
		cb.mu.Lock()
	}
	batch := cb.take()
	cb.mu.Unlock()

	send(batch)
	if len(batch) == 1 {
		cb.mu.Lock()
		cb.handOn()
		cb.mu.Unlock()
		return
	}
	cb.unseen.Store(int32(len(batch) - 1))
	for _, b := range batch {
		if b != c {
			b.signal()
		}
	}
}

// handOn, with cb.mu held, once every call of the script back has its
// results, hands the calls that wait to the first of them, which sends
// the next script, or ends busy if none waits.
func (cb *combiner) handOn() {
	if len(cb.waiting) == 0 {
		cb.busy = false
		return
	}
	next := cb.waiting[0]
	next.lead = true
	next.signal()
}

// take removes from the waiting calls those the next script serves: the
// first, and those after it that fit its claim, up to maxCombined.
func (cb *combiner) take() []*finishCall {
	batch := make([]*finishCall, 0, min(len(cb.waiting), maxCombined))
	var p store.ClaimParams
	left := cb.waiting[:0]
	for _, c := range cb.waiting {
		if len(batch) < maxCombined && c.fits(p) {
			batch = append(batch, c)
			if p.Keys == 0 {
				p = c.p
			}
			continue
		}
		left = append(left, c)
	}
	clear(cb.waiting[len(left):])
	cb.waiting = left
	return batch
}

// finishBatch runs finish.lua for the calls of batch whose ctx has not
// ended, and sets the results of every call.
func (s *Store) finishBatch(q *queue, batch []*finishCall) {
	var p store.ClaimParams
	live := batch // unless a call's ctx ended
	var deadline time.Time
	for i, c := range batch {
		if err := c.ctx.Err(); err != nil {
			if len(live) == len(batch) {
				live = slices.Clone(batch[:i])
			}
			c.err = err
			continue
		}
		if len(live) < len(batch) {
			live = append(live, c)
		}
		if p.Keys == 0 {
			p = c.p
		}
		if d, ok := c.ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
			deadline = d
		}
	}
	if len(live) == 0 {
		return
	}
	// A script that serves several calls runs with the values of the
	// first and none's cancellation, but ends by the earliest deadline;
	// one that serves one call, with its ctx.
	ctx := live[0].ctx
	if len(live) > 1 {
		ctx = context.WithoutCancel(ctx)
	}
	if len(live) > 1 && !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	// The whole FCALL command, built once: go-redis would copy the
	// arguments into a command of its own.
	cmd := make([]any, 0, 3+len(q.ready)+5+6*len(live)+2)
	cmd = append(cmd, "fcall", finishFn, len(q.ready))
	for _, k := range q.ready {
		cmd = append(cmd, k)
	}
	cmd = append(cmd, q.prefix, p.MaxBatch, micros(p.TTL), p.Holder, perKey(p))
	for _, c := range live {
		cmd = append(cmd, c.l.Key, c.l.Fence, int(c.o.Kind), micros(c.o.After), c.o.Err, c.p.Keys)
	}
	if p.Keys > 0 && p.KeyRate.On() {
		cmd = keyRateArgs(cmd, p.KeyRate)
	}
	r, err := s.runCommand(ctx, cmd).Slice()
	if err == nil {
		err = spread(q.name, live, r)
	}
	if err != nil {
		op := "finish"
		if p.Keys > 0 {
			op = "finish and claim"
		}
		for _, c := range live {
			c.err = wrap(op, err)
		}
	}
}

// spread reads finish.lua's reply r and sets the results of calls.
func spread(queue string, calls []*finishCall, r []any) error {
	if len(r) < len(calls) {
		return errors.New("short reply")
	}
	var leases []store.Lease
	var next time.Duration
	if len(r) > len(calls) {
		var err error
		if leases, next, err = parseClaim(queue, r[len(calls):]); err != nil {
			return err
		}
	}
	for i, c := range calls {
		more, _ := r[i].(int64)
		if more < 0 {
			c.err = store.ErrLeaseLost
			continue
		}
		c.more = more == 1
		if c.p.Keys == 0 {
			continue
		}
		if n := min(c.p.Keys, len(leases)); n > 0 {
			c.leases, leases = leases[:n:n], leases[n:]
		}
		c.next = next
	}
	return nil
}
