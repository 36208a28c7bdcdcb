package shared

import (
	"sync"
	"sync/atomic"

	"github.com/pacerkit/pacer/internal/timing"
)

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
// A goroutine that ran a job waits for the next, up to maxIdle of them at
// once, until close: a job then goes to one whose stack grew already, to
// the depth of a store's client, where a new goroutine would grow its
// stack again, copying it at each doubling. A job carries all it needs:
// nothing of one job stays on its goroutine for the next.
type engineCalls struct {
	clk     timing.Clock
	busy    sync.WaitGroup // the calls that run, abandoned ones included
	maxIdle int32

	jobs    chan func()    // to a goroutine that waits for one
	idle    atomic.Int32   // goroutines that wait for a job
	alive   sync.WaitGroup // the goroutines
	quit    chan struct{}  // closed by close
	closing sync.Once
}

// newEngineCalls returns an engineCalls on clk that keeps up to maxIdle
// goroutines waiting for a job.
func newEngineCalls(clk timing.Clock, maxIdle int) *engineCalls {
	return &engineCalls{clk: clk, maxIdle: int32(maxIdle), jobs: make(chan func()), quit: make(chan struct{})}
}

// run runs job on a goroutine of its own.
func (c *engineCalls) run(job func()) {
	c.busy.Add(1)
	c.start(job)
}

// start runs job, which busy counts already, on a goroutine that waits
// for one if there is, or on a new one.
func (c *engineCalls) start(job func()) {
	select {
	case c.jobs <- job:
	default:
		c.alive.Add(1)
		go c.serve(job)
	}
}

// serve runs job, and then the jobs it gets while it waits for one, if
// fewer than maxIdle goroutines wait already; until close.
func (c *engineCalls) serve(job func()) {
	defer c.alive.Done()
	for {
		job()
		c.busy.Done()
		if c.idle.Add(1) > c.maxIdle {
			c.idle.Add(-1)
			return
		}
		select {
		case job = <-c.jobs:
			c.idle.Add(-1)
		case <-c.quit:
			c.idle.Add(-1)
			return
		}
	}
}

// wait waits for the calls that run, abandoned ones included.
func (c *engineCalls) wait() { c.busy.Wait() }

// close ends the goroutines that wait for a job, once no call runs, and
// waits for them; a job started later ends its goroutine once done.
func (c *engineCalls) close() {
	c.closing.Do(func() { close(c.quit) })
	c.busy.Wait()
	c.alive.Wait()
}
