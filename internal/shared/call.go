package shared

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
)

// errNoAnswer is the error of a call to the store that did not answer in
// time: the Runner stopped waiting for it.
var errNoAnswer = errors.New("pacer: the store did not answer in time")

// An engineCall is one call made by the job newCall returns: a renewal,
// whose answer the keeper waits for beside its own timer.
type engineCall[T any] struct {
	state  atomic.Int32       // callRunning, callAnswered or callAbandoned
	result chan callResult[T] // one slot: the answer, once callAnswered
}

const (
	callRunning int32 = iota
	callAnswered
	callAbandoned
)

type callResult[T any] struct {
	v   T
	err error
}

// newCall returns a call of call, and the job that makes it, for a
// goroutine of c or the lease's keeper: under a ctx that carries ctx's
// values but not its cancellation (the end of a lease must reach the
// store when the Runner stops) and that ends at deadline, on c's clock.
// If its caller abandons it (stop), late, if not nil, gets its result
// once it returns.
func newCall[T any](c *engineCalls, ctx context.Context, deadline time.Time, call func(context.Context) (T, error), late func(T, error)) (*engineCall[T], engine.JobFunc) {
	ec := &engineCall[T]{result: make(chan callResult[T], 1)}
	return ec, engine.JobFunc(func() {
		cctx, cancel := c.callContext(ctx, deadline)
		ec.make(cctx, call, late)
		cancel()
	})
}

// callContext returns the ctx a call runs under: ctx's values, without
// its cancellation, until deadline on c's clock.
func (c *engineCalls) callContext(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), deadline.Sub(c.clk.Now()))
}

// make makes the call under cctx, and hands its result to its caller, or
// to late if the caller abandoned it. The result is handed over before
// cctx is cancelled: a caller that waits for cctx's end then finds it.
func (ec *engineCall[T]) make(cctx context.Context, call func(context.Context) (T, error), late func(T, error)) {
	v, err := call(cctx)
	if ec.state.CompareAndSwap(callRunning, callAnswered) {
		ec.result <- callResult[T]{v, err}
	} else if late != nil {
		late(v, err)
	}
}

// startCall makes call as newCall says, on a goroutine of c.
func startCall[T any](c *engineCalls, ctx context.Context, deadline time.Time, call func(context.Context) (T, error), late func(T, error)) *engineCall[T] {
	ec, job := newCall(c, ctx, deadline, call, late)
	c.run(job)
	return ec
}

// stop abandons the call, and reports whether it did: false if the call
// answered already (its result is on ec.result).
func (ec *engineCall[T]) stop() bool {
	return ec.state.CompareAndSwap(callRunning, callAbandoned)
}

// A storeCaller is a call to the store that a storeCall makes.
type storeCaller[T any] interface {
	// call makes the call under ctx.
	call(ctx context.Context) (T, error)
	// late gets the result of a call its caller stopped waiting for, once
	// the call returns.
	late(v T, err error)
	// then gets the result of a call made by callThen, or errNoAnswer at
	// its deadline.
	then(v T, err error)
}

// A storeCall is one call to the store about a lease (its end), its state,
// its result, and the ctx it runs under, in one allocation with what
// its caller embeds it in: it is its own engine.Job and its own ctx.
//
// As a ctx it carries its caller's values but not its cancellation (the
// end of a lease must reach the store when the Runner stops) and it ends
// at deadline: a waiting caller (callOn) ends it when it stops waiting
// there, callThen's timer when nobody waits; otherwise the call ends it
// once it returns, after handing over its result.
type storeCall[T any] struct {
	values   context.Context // the caller's ctx, without its cancellation
	deadline time.Time
	callee   storeCaller[T]
	state    atomic.Int32  // callRunning, callAnswered or callAbandoned
	done     chan struct{} // closed by whoever moves state from callRunning
	v        T             // the result, once callAnswered
	err      error
	timer    stopper // callThen's: stops the call's abandonment at deadline
}

var _ context.Context = (*storeCall[int])(nil)

// init readies sc to make callee's call, under ctx's values, until
// deadline.
func (sc *storeCall[T]) init(c *engineCalls, ctx context.Context, deadline time.Time, callee storeCaller[T]) {
	sc.values, sc.deadline, sc.callee = c.withoutCancel(ctx), deadline, callee
	sc.done = make(chan struct{})
}

// Deadline implements context.Context.
func (sc *storeCall[T]) Deadline() (time.Time, bool) { return sc.deadline, true }

// Done implements context.Context.
func (sc *storeCall[T]) Done() <-chan struct{} { return sc.done }

// Err implements context.Context: context.DeadlineExceeded once its
// caller stopped waiting at the deadline, context.Canceled once the call
// returned.
func (sc *storeCall[T]) Err() error {
	select {
	case <-sc.done:
	default:
		return nil
	}
	if sc.state.Load() == callAbandoned {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// Value implements context.Context with the caller's values.
func (sc *storeCall[T]) Value(key any) any { return sc.values.Value(key) }

// Run implements engine.Job: it makes the call, and hands its result to
// its caller (or, from callThen, to then), or to late if the caller
// abandoned it. The result is handed over before the ctx ends: a caller
// that waits for the ctx's end then finds it.
func (sc *storeCall[T]) Run() {
	v, err := sc.callee.call(sc)
	sc.v, sc.err = v, err
	if !sc.state.CompareAndSwap(callRunning, callAnswered) {
		sc.callee.late(v, err)
		return
	}
	close(sc.done)
	if sc.timer != nil {
		sc.timer.stop()
		sc.callee.then(v, err)
	}
}

// abandon stops the call at its deadline, and reports whether it did:
// false if it answered already.
func (sc *storeCall[T]) abandon() bool {
	if !sc.state.CompareAndSwap(callRunning, callAbandoned) {
		return false
	}
	close(sc.done)
	return true
}

// ring is callThen's alarm's: at the deadline, then gets errNoAnswer.
func (sc *storeCall[T]) ring() {
	if sc.abandon() {
		var zero T
		sc.callee.then(zero, errNoAnswer)
	}
}

// callOn makes sc's call: on the lease's keeper if it has one (k), on a
// goroutine of c otherwise. It waits for its result until its deadline:
// then it abandons the call, ends its ctx and returns errNoAnswer. It
// returns engine.ErrLeaseLost, without making the call, if the keeper is
// gone, having lost the lease.
func callOn[T any](c *engineCalls, k engine.Keeper, sc *storeCall[T]) (T, error) {
	var zero T
	if k == nil {
		c.run(sc)
	} else if !k.End(sc) {
		return zero, engine.ErrLeaseLost
	}
	t := c.timer(sc.deadline.Sub(c.clk.Now()))
	defer c.putTimer(t)
	select {
	case <-sc.done:
		return sc.v, sc.err
	case <-t.C():
	}
	if sc.abandon() {
		return zero, errNoAnswer
	}
	<-sc.done // it answered as the deadline came
	return sc.v, sc.err
}

// callThen makes sc's call as callOn does, on the lease's keeper k, but
// does not wait for it: the callee's then gets its result, on the keeper's
// goroutine, or errNoAnswer at the deadline, on a timer's, if it has not
// answered by then (late then gets its result once it does). If the
// keeper is gone, having lost the lease, then gets engine.ErrLeaseLost on
// a goroutine of c. No goroutine waits for the call meanwhile.
func callThen[T any](c *engineCalls, k engine.Keeper, sc *storeCall[T]) {
	sc.timer = c.arm(sc.deadline.Sub(c.clk.Now()), sc)
	if !k.End(sc) && sc.abandon() {
		sc.timer.stop()
		c.run(engine.JobFunc(func() {
			var zero T
			sc.callee.then(zero, engine.ErrLeaseLost)
		}))
	}
}
