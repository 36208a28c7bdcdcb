package shared

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/timing"
)

// errNoAnswer is the error of a call to the store that did not answer in
// time: the Runner stopped waiting for it.
var errNoAnswer = errors.New("pacer: the store did not answer in time")

// engineCalls runs, each on a goroutine of its own, the keepers of leases
// (keeper.go) and the calls to the store about a lease, renewals
// and ends, so that their caller can stop waiting for a call at a
// deadline, whatever the call does: a client that ignores ctx deadlines
// (go-redis does, unless Options.ContextTimeoutEnabled), on a connection
// that stopped forwarding bytes without closing, as in a network
// partition, must not hold back the Runner's decision that a lease is
// lost, nor a worker. The call's ctx ends at the deadline too, for the
// clients that listen. A call its caller stopped waiting for runs on until
// the client gives up (go-redis after its read timeouts and retries); wait
// waits for those too.
//
// A goroutine whose job ended waits a while (idleFor) for the next one
// before it exits: a job that a goroutine takes over runs on a stack
// grown already, where a new goroutine's stack would grow, by copying,
// deep in the store's client (a pgx batch's encoding, say) on each call.
type engineCalls struct {
	clk  timing.Clock
	busy sync.WaitGroup // the calls that run, abandoned ones included
	idle chan func()    // unbuffered: taken by a goroutine that waits for a job
	quit chan struct{}  // closed by stop: the waiting goroutines exit
	once sync.Once
}

// idleFor is how long a goroutine of engineCalls waits for its next job,
// on the real clock: the wait is no part of the Runner's timing.
const idleFor = time.Second

// run runs job on a goroutine of its own: one that waits for a job, or a
// new one.
func (c *engineCalls) run(job func()) {
	c.busy.Add(1)
	select {
	case c.idle <- job:
	default:
		go c.serve(job)
	}
}

// serve runs job, and then the jobs it is handed, until none comes for
// idleFor or c stops.
func (c *engineCalls) serve(job func()) {
	t := time.NewTimer(idleFor)
	defer t.Stop()
	for {
		job()
		c.busy.Done()
		job = nil // what it holds is not kept while the goroutine waits
		t.Reset(idleFor)
		select {
		case job = <-c.idle:
		case <-t.C:
			return
		case <-c.quit:
			return
		}
	}
}

// wait waits for the calls that run, abandoned ones included.
func (c *engineCalls) wait() { c.busy.Wait() }

// stop has the goroutines that wait for a job exit; a job run later runs
// on a goroutine that exits once it ended.
func (c *engineCalls) stop() { c.once.Do(func() { close(c.quit) }) }

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
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deadline.Sub(c.clk.Now()))
		v, err := call(cctx)
		cancel()
		if ec.state.CompareAndSwap(callRunning, callAnswered) {
			ec.result <- callResult[T]{v, err}
		} else if late != nil {
			late(v, err)
		}
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
// having lost the lease.
func callBy[T any](c *engineCalls, k engine.Keeper, ctx context.Context, deadline time.Time, call func(context.Context) (T, error), late func(T, error)) (T, error) {
	var zero T
	ec, job := newCall(c, ctx, deadline, call, late)
	if k == nil {
		c.run(job)
	} else if !k.End(job) {
		return zero, engine.ErrLeaseLost
	}
	t := c.clk.NewTimer(deadline.Sub(c.clk.Now()))
	defer t.Stop()
	select {
	case r := <-ec.result:
		return r.v, r.err
	case <-t.C():
		if ec.stop() {
			return zero, errNoAnswer
		}
		r := <-ec.result // it answered as the deadline came
		return r.v, r.err
	}
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
