package fifo

import (
	"context"

	"github.com/pacerkit/pacer/internal/sched"
)

// ShutDown stops intake: Put returns ErrClosed from now on. Everything
// stored still flows: keys that are or become ready (a lease ended with
// messages behind it, a delay that passed, a Release) are handed out by
// Get, which waits while delays are pending and returns ErrClosed once no
// key is ready or delayed. Held keys stay held. If no delay is pending,
// ShutDown also ends the timer goroutine and waits for it; otherwise a Get
// that returns ErrClosed, ShutDownWithDrain or Close does. ShutDown also
// forces every ShutDownWithDrain waiting at that moment to return, without
// waiting for the drain, as Queue.ShutDown does. ShutDown is idempotent.
func (g *Groups[K, M]) ShutDown() {
	g.mu.Lock()
	g.shutDown()
	if g.cut != nil {
		close(g.cut)
		g.cut = nil
	}
	g.stopIdleLoop()
}

// shutDown stops intake. The caller holds the lock.
func (g *Groups[K, M]) shutDown() {
	if !g.shut {
		g.shut = true
		g.waiters.wakeAll()
		g.checkDrained()
	}
}

// stopIdleLoop releases the lock, then ends the timer goroutine and waits
// for it if Groups is shut down and no delay is pending.
func (g *Groups[K, M]) stopIdleLoop() {
	loop := g.idleLoop()
	g.mu.Unlock()
	if loop != nil {
		loop.Stop()
	}
}

// idleLoop detaches the timer loop once Groups is shut down and no delay is
// pending, for the caller to stop after releasing the lock. A later delay
// (a lease still out may Retry) starts a new one.
func (g *Groups[K, M]) idleLoop() *sched.Loop {
	if !g.shut || g.delayed > 0 {
		return nil
	}
	loop := g.delay.loop
	g.delay.loop = nil
	return loop
}

// ShutDownWithDrain shuts down like ShutDown, then waits until no key is
// ready or delayed and no lease is out, so only held keys are left:
// consumers must keep calling Get and ending their leases until Get returns
// ErrClosed. It then ends the timer goroutine and returns nil. If
// ShutDown is called meanwhile it returns ErrClosed at once, and if ctx
// ends first it returns ctx.Err(); either way Groups stays shut down and
// keeps draining, and a later ShutDownWithDrain waits again.
func (g *Groups[K, M]) ShutDownWithDrain(ctx context.Context) error {
	g.mu.Lock()
	g.shutDown()
	if g.drained == nil {
		g.drained = make(chan struct{})
		g.checkDrained()
	}
	drained := g.drained
	if g.cut == nil && !g.drainEnd {
		g.cut = make(chan struct{})
	}
	cut := g.cut
	g.stopIdleLoop()
	if err := waitDrain(ctx, drained, cut); err != nil {
		return err
	}
	g.mu.Lock()
	g.stopIdleLoop()
	return nil
}

// checkDrained closes drained once the shut-down Groups has nothing ready
// or delayed and no lease out; after that only Release can make a key ready
// again.
func (g *Groups[K, M]) checkDrained() {
	if g.shut && g.drained != nil && !g.drainEnd && g.readyLen() == g.stale && g.delayed == 0 && g.leases == 0 {
		g.drainEnd = true
		close(g.drained)
	}
}

// Close shuts Groups down for good, ends its timer goroutine and waits for
// it, and takes back every message not out on a lease, ready, delayed or
// held: after the lock is released, left is called with each key's
// messages in Put order, in batches of at most MaxBatch as Get would have
// leased them; ready keys come first, in ready order, then the delayed and
// held ones in no particular order. Get returns ErrClosed from then on
// and Release reports false. A lease still out may be ended afterwards: Ack
// and Drop hand the messages behind it to left, Retry, Defer and Hold its
// own messages too, on the caller's goroutine. left may be nil to discard
// the messages. Close also ends a pending ShutDownWithDrain once no lease
// is out. Close is idempotent; later calls take back nothing.
func (g *Groups[K, M]) Close(left func(key K, msgs []M)) {
	type rest struct {
		key  K
		msgs []M
	}
	var back []rest
	take := func(key K, gr *group[M]) {
		back = append(back, rest{key, gr.msgs})
		g.waiting -= len(gr.msgs)
		g.stored -= len(gr.msgs)
		g.forget(key, gr)
	}
	g.mu.Lock()
	if !g.closed {
		g.closed, g.shut, g.left = true, true, left
		for r, ok := g.popReady(); ok; r, ok = g.popReady() { // stale entries dropped
			if g.perKey > 1 {
				if msgs := g.takeRuns(r.key, r.gr); len(msgs) > 0 {
					back = append(back, rest{r.key, msgs})
				}
				continue
			}
			take(r.key, r.gr)
		}
		g.stale = 0
		for key, gr := range g.groups {
			if g.perKey > 1 {
				if msgs := g.takeRuns(key, gr); len(msgs) > 0 {
					back = append(back, rest{key, msgs})
				}
				continue
			}
			if gr.state != stateLeased {
				take(key, gr)
			}
		}
		g.delay.heap = sched.Heap[K]{}
		g.delayed, g.retrying, g.behind, g.held, g.heldMsgs = 0, 0, 0, 0, 0
		g.waiters.wakeAll()
		g.checkDrained()
	}
	loop := g.delay.loop
	g.delay.loop = nil
	g.mu.Unlock()
	if loop != nil {
		loop.Stop()
	}
	for _, r := range back {
		g.giveBack(left, r.key, r.msgs)
	}
}
