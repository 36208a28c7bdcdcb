package shared

import (
	"context"
	"errors"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// Finish implements engine.Engine. A worker that goes back to Get next
// claims its next batch in the same call (finishNext) after an Ack, a
// Drop or a Retry; a quick batch's Ack may go on in the background.
func (s *Engine[K, V]) Finish(ctx context.Context, l engine.Lease[K, V], o store.Outcome) (bool, error) {
	switch o.Kind {
	case store.Ack:
		if s.ackLater(l) {
			s.ackInBackground(ctx, l, o)
			return false, nil
		}
		return s.finishNext(ctx, l, o)
	case store.Drop, store.Retry:
		// A Drop is kept by the store as it was stored, with o.Err, as a
		// dead letter.
		return s.finishNext(ctx, l, o)
	default:
		// A Defer claims nothing: a batch is deferred when it could not
		// run, mostly because the Runner is stopping. Neither does a Hold:
		// holding is rare, and the worker runs OnEvent's EventHeld before
		// it is back in Get.
		return s.finish(ctx, l, o)
	}
}

// finish ends l in the store as o says. It runs even when ctx ended (a
// Runner stopping defers its batches), and waits for the store LeaseTTL
// at most (see engineCalls), after which the engine would refuse it
// anyway. It does not end a lease whose deadline passed (errLapsed): the
// lease may be another holder's.
func (s *Engine[K, V]) finish(ctx context.Context, l engine.Lease[K, V], o store.Outcome) (bool, error) {
	if l.Lapsed(s.clk) {
		return false, errLapsed
	}
	e := s.newEnd(ctx, l, o, false, s.clk.Now())
	r, err := callOn(s.calls, l.Remote.Keeper, &e.storeCall)
	return r.more, err
}

// errLapsed is the error of an end of a lease whose deadline passed: it is
// not sent, the lease may be another holder's.
var errLapsed = errors.New("pacer: the lease's deadline passed, its end was not sent")

// finishNext ends l as finish does, after a handler call, by a worker that
// goes back to Get next. With a store that can, the same round trip
// claims a key for it, handed over like the leader's claims (see
// claim.go): its next Get, or an idle worker's, takes it without a
// Claim. The key is leased meanwhile, while the worker reports the batch
// (OnEvent), as a key the leader claimed is until a worker takes it. A
// Runner that is stopping claims nothing, and gives back at once, with no
// attempt used, what it claimed while it began to stop. A call the worker
// stopped waiting for hands what it claims once it answers, as if in
// time.
func (s *Engine[K, V]) finishNext(ctx context.Context, l engine.Lease[K, V], o store.Outcome) (bool, error) {
	if s.fc == nil || ctx.Err() != nil || s.stop.Err() != nil {
		return s.finish(ctx, l, o)
	}
	if l.Lapsed(s.clk) {
		return false, errLapsed
	}
	at := s.clk.Now()
	e := s.newEnd(ctx, l, o, true, at)
	r, err := callOn(s.calls, l.Remote.Keeper, &e.storeCall)
	s.handClaimed(ctx, r.leases, at)
	return r.more, err
}

// ended is what an end's call returns.
type ended struct {
	more   bool          // the key has more values
	leases []store.Lease // claimed for the caller
}

// An end is the call that ends a lease, and claims a key in the same
// round trip if claim is set, with all it needs, in one allocation.
type end[K comparable, V any] struct {
	storeCall[ended]
	s     *Engine[K, V]
	ctx   context.Context // the caller's
	l     engine.Lease[K, V]
	o     store.Outcome
	at    time.Time // when it was sent
	claim bool
}

// newEnd returns the end of l as o says, sent at at, that the caller
// makes under ctx's values, until the store's LeaseTTL after at.
func (s *Engine[K, V]) newEnd(ctx context.Context, l engine.Lease[K, V], o store.Outcome, claim bool, at time.Time) *end[K, V] {
	e := &end[K, V]{s: s, ctx: ctx, l: l, o: o, at: at, claim: claim}
	e.init(s.calls, ctx, at.Add(s.ttl), e)
	return e
}

func (e *end[K, V]) call(ctx context.Context) (ended, error) {
	s := e.s
	if !e.claim {
		more, err := s.st.Finish(ctx, e.l.Remote.Lease, e.o)
		return ended{more: more}, err
	}
	p := store.ClaimParams{Keys: 1, MaxBatch: s.maxBatch, TTL: s.ttl, Holder: s.holder, PerKey: s.perKey, KeyRate: s.keyRate}
	more, leases, _, err := s.fc.FinishAndClaim(ctx, e.l.Remote.Lease, e.o, p)
	return ended{more, leases}, err
}

// late hands over what a call its caller stopped waiting for claimed, once
// it answers, as if in time.
func (e *end[K, V]) late(r ended, _ error) { e.s.handClaimed(e.ctx, r.leases, e.at) }

// then is the result of an Ack in the background (ack.go).
func (e *end[K, V]) then(r ended, err error) {
	e.s.handClaimed(e.ctx, r.leases, e.at)
	defer e.s.acking.Done()
	e.s.acked(e.l, r.more, err)
}

// handClaimed hands over the leases a call sent at at claimed, or gives
// them back if the Runner is stopping.
func (s *Engine[K, V]) handClaimed(ctx context.Context, leases []store.Lease, at time.Time) {
	for _, nl := range leases {
		if s.stop.Err() != nil || ctx.Err() != nil {
			// A Get that saw the stop may have given back the handoff
			// already: this lease must not wait there for a worker.
			s.deferNow(ctx, s.claimed(nl, at))
			continue
		}
		s.hand(ctx, s.claimed(nl, at))
	}
}
