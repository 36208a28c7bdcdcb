package shared

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/timing"
)

// errNoAnswer is the error of a call to the store that did not answer in
// time: the Runner stopped waiting for it.
var errNoAnswer = errors.New("pacer: the store did not answer in time")

// An engineCall is one call made by the job newCall returns.
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
func newCall[T any](c *engineCalls, ctx context.Context, deadline time.Time, call func(context.Context) (T, error), late func(T, error)) (*engineCall[T], func()) {
	ec := &engineCall[T]{result: make(chan callResult[T], 1)}
	return ec, func() {
		cctx, cancel := c.callContext(ctx, deadline)
		ec.make(cctx, call, late)
		cancel()
	}
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

// callBy makes call as newCall says: on the lease's keeper if it has one
// (k), on a goroutine of c otherwise. It waits for its result until
// deadline: after it, it abandons the call and returns errNoAnswer. It
// returns engine.ErrLeaseLost, without making the call, if the keeper is gone,
// having lost the lease. On the real clock, the end of the call's ctx
// tells the deadline, with no timer besides.
func callBy[T any](c *engineCalls, k engine.Keeper, ctx context.Context, deadline time.Time, call func(context.Context) (T, error), late func(T, error)) (T, error) {
	var zero T
	ec := &engineCall[T]{result: make(chan callResult[T], 1)}
	cctx, cancel := c.callContext(ctx, deadline)
	job := func() {
		ec.make(cctx, call, late)
		cancel()
	}
	if k == nil {
		c.run(job)
	} else if !k.End(job) {
		cancel()
		return zero, engine.ErrLeaseLost
	}
	// On the real clock, the call's ctx ends at the deadline; on another,
	// only a timer of that clock tells it.
	var expired <-chan struct{}
	var tick <-chan time.Time
	if _, real := c.clk.(timing.Real); real {
		expired = cctx.Done()
	} else {
		t := c.clk.NewTimer(deadline.Sub(c.clk.Now()))
		defer t.Stop()
		tick = t.C()
	}
	select {
	case r := <-ec.result:
		return r.v, r.err
	case <-expired:
	case <-tick:
	}
	if ec.stop() {
		return zero, errNoAnswer
	}
	r := <-ec.result // it answered as the deadline came
	return r.v, r.err
}

// callThen makes call as callBy does, on the lease's keeper k, but does
// not wait for it: then gets its result, on the keeper's goroutine, or
// errNoAnswer at deadline, on a timer's, if it has not answered by then
// (late then gets its result once it does). If the keeper is gone, having
// lost the lease, then gets engine.ErrLeaseLost on a goroutine of c. No
// goroutine waits for the call meanwhile.
func callThen[T any](c *engineCalls, k engine.Keeper, ctx context.Context, deadline time.Time, call func(context.Context) (T, error), late, then func(T, error)) {
	var zero T
	ec := &engineCall[T]{}
	stop := timing.AfterFunc(c.clk, deadline.Sub(c.clk.Now()), func() {
		if ec.stop() {
			then(zero, errNoAnswer)
		}
	})
	job := func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deadline.Sub(c.clk.Now()))
		v, err := call(cctx)
		cancel()
		if ec.state.CompareAndSwap(callRunning, callAnswered) {
			stop()
			then(v, err)
		} else if late != nil {
			late(v, err)
		}
	}
	if !k.End(job) {
		if ec.stop() {
			stop()
			c.run(func() { then(zero, engine.ErrLeaseLost) })
		}
	}
}
