package pacer

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
)

// errNoAnswer is the error of a call about a lease that the engine did not
// answer before the lease's deadline: the Runner stopped waiting for it.
var errNoAnswer = errors.New("pacer: the store did not answer before the lease's deadline")

// errLapsed is the error of a call about a lease whose deadline passed
// before it was made: it is not made, the lease may be another holder's.
var errLapsed = errors.New("pacer: the lease's deadline passed, the call was not made")

// engineCalls runs the calls to the engine about a lease (renewals and
// ends) so that their caller can stop waiting for them at the lease's
// deadline, whatever the call does: a client that ignores ctx deadlines
// (go-redis does, unless Options.ContextTimeoutEnabled), on a connection
// that stopped forwarding bytes without closing, as in a network
// partition, must not hold back the Runner's decision that the lease is
// lost, nor a worker. The call's ctx ends at the deadline too, for the
// clients that listen. A call its caller stopped waiting for runs on
// until the client gives up (go-redis after its read timeouts and
// retries); wait waits for those, which is what a Close does.
type engineCalls struct {
	clk timing.Clock
	wg  sync.WaitGroup
}

// An engineCall is one call started by engineCalls.start.
type engineCall[T any] struct {
	result  chan callResult[T] // unbuffered: only a caller that still waits takes it
	abandon chan struct{}      // closed when the caller stops waiting
	once    sync.Once
}

type callResult[T any] struct {
	v   T
	err error
}

// startCall runs call on a goroutine of its own, under a ctx that carries
// ctx's values but not its cancellation (the end of a lease must reach
// the engine when the Runner stops) and that ends at deadline, on c's
// clock. If its caller abandons it, late (if not nil) gets its result once
// it returns.
func startCall[T any](c *engineCalls, ctx context.Context, deadline time.Time, call func(context.Context) (T, error), late func(T, error)) *engineCall[T] {
	ec := &engineCall[T]{result: make(chan callResult[T]), abandon: make(chan struct{})}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deadline.Sub(c.clk.Now()))
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		v, err := call(cctx)
		cancel()
		select {
		case ec.result <- callResult[T]{v, err}:
		case <-ec.abandon:
			if late != nil {
				late(v, err)
			}
		}
	}()
	return ec
}

// stop abandons the call: its caller no longer waits for it.
func (ec *engineCall[T]) stop() { ec.once.Do(func() { close(ec.abandon) }) }

// callBy runs call as startCall does and waits for its result until
// deadline: after it, it abandons the call and returns errNoAnswer. It
// does not make the call, and returns errLapsed, if deadline passed
// already.
func callBy[T any](c *engineCalls, ctx context.Context, deadline time.Time, call func(context.Context) (T, error), late func(T, error)) (T, error) {
	var zero T
	left := deadline.Sub(c.clk.Now())
	if left <= 0 {
		return zero, errLapsed
	}
	ec := startCall(c, ctx, deadline, call, late)
	t := c.clk.NewTimer(left)
	defer t.Stop()
	select {
	case r := <-ec.result:
		return r.v, r.err
	case <-t.C():
		ec.stop()
		return zero, errNoAnswer
	}
}

// wait waits for the calls that run, abandoned ones included.
func (c *engineCalls) wait() { c.wg.Wait() }
