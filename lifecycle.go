package pacer

import (
	"context"
	"fmt"
	"sync/atomic"
)

// Run starts Config.Workers workers and blocks until they stop: when ctx
// ends, or when Shutdown has drained the Runner.
//
// When ctx ends, Run pauses the Runner and loses nothing: the handlers' ctx
// is cancelled (with ctx's cause), the batches they were working on go back
// to their keys without using an attempt, the workers stop, and Run returns
// ctx.Err(). Everything accepted stays in the Runner and Add still accepts
// values; call Shutdown to handle it all (it runs the workers itself), or
// Run again to resume. If ctx ends after a Shutdown began, the drain goes on
// under the Shutdown's control and Run returns once it is over.
//
// With a Config.Store, the batches cut short go back to the engine, where
// any instance may take them at once, and what is stored stays there.
//
// Run returns nil when a Shutdown stopped it, ErrRunning while another Run
// runs, and ErrClosed once Shutdown began.
func (r *Runner[K, V]) Run(ctx context.Context) error {
	r.mu.Lock()
	switch {
	case r.closed.Load():
		r.mu.Unlock()
		return ErrClosed
	case r.crew != nil:
		r.mu.Unlock()
		return ErrRunning
	case ctx.Err() != nil:
		r.mu.Unlock()
		return ctx.Err()
	}
	c := r.startLocked(ctx)
	r.mu.Unlock()
	stop := context.AfterFunc(ctx, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.closed.Load() { // a Shutdown that began owns the drain
			c.byRun = true
			c.cancel(context.Cause(ctx))
		}
	})
	<-c.done
	stop()
	r.mu.Lock()
	byRun := c.byRun
	r.mu.Unlock()
	if byRun {
		return ctx.Err()
	}
	return nil
}

// A crew is one set of Config.Workers workers, started by Run or by
// Shutdown, sharing one ctx.
type crew struct {
	cancel context.CancelCauseFunc
	byRun  bool // Run's ctx ended and stopped it; guarded by Runner.mu
	left   atomic.Int32
	done   chan struct{} // closed when the last worker returned
}

// startLocked starts a crew whose ctx carries parent's values but not its
// cancellation, which Run and hardStop handle. The caller holds r.mu.
func (r *Runner[K, V]) startLocked(parent context.Context) *crew {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	c := &crew{cancel: cancel, done: make(chan struct{})}
	if r.gaveUp {
		cancel(ErrClosed)
	}
	c.left.Store(int32(r.cfg.Workers))
	for range r.cfg.Workers {
		go func() {
			r.work(ctx)
			if c.left.Add(-1) > 0 {
				return
			}
			r.mu.Lock()
			if r.crew == c {
				r.crew = nil
			}
			r.mu.Unlock()
			cancel(nil)
			close(c.done)
		}()
	}
	r.crew = c
	return c
}

// Shutdown stops the Runner gracefully and waits until it is drained: Add
// returns ErrClosed from now on, bursts still being debounced are queued at
// once (or handed to OnDrop with ErrClosed, with
// Config.DropPendingOnShutdown), and the workers handle everything queued,
// retries included, until nothing but held keys is left. Then held keys go
// to OnDrop with ErrClosed, a running Run returns nil, and Shutdown returns
// nil once every goroutine of the Runner has returned.
//
// Shutdown is the only way to drain a Runner: ending Run's ctx pauses it
// and drops nothing (see Run), so a program must call Shutdown before it
// exits, whatever stopped Run. If no Run is running, because it never
// started or because its ctx ended, Shutdown runs the workers itself; a Run
// called after Shutdown began returns ErrClosed. If Run's ctx ends during
// the drain, the drain goes on.
//
// If ctx ends first, Shutdown stops at once: it cancels the handlers' ctx
// (cause ErrClosed), waits for the running calls to return, hands
// everything not handled to OnDrop with ErrClosed, and returns an error
// that says how many values it dropped and wraps ctx.Err(), so that
// errors.Is(err, context.DeadlineExceeded) holds for an expired deadline.
// Handlers must therefore return when their ctx ends.
//
// With a Config.Store, Shutdown leaves the queue to the engine and the
// other instances: it stops claiming batches at once and lets the running
// ones finish, and nothing goes to OnDrop. If ctx ends first, the
// handlers' ctx is cancelled (cause ErrClosed) and their batches go back to
// the engine without using an attempt, where another instance takes them
// at once; Shutdown then returns an error that wraps ctx.Err(). Shutdown
// also waits for the calls to the engine that the Runner stopped waiting
// for (see Config.LeaseTTL), which end when the engine's client gives up. The Store is not closed: it belongs to the
// caller.
//
// Shutdown and ErrClosed follow net/http's Server: Shutdown(ctx) is the
// graceful stop, and an expired ctx is the immediate one. Shutdown is
// idempotent and safe to call concurrently; every call waits for the first
// to finish, and a later call whose ctx ends first makes the Runner stop at
// once as above. Shutdown waits for the workers, which call the handler,
// OnEvent and OnDrop, so it must not be called from those: it would never
// return.
func (r *Runner[K, V]) Shutdown(ctx context.Context) error {
	first := false
	r.shutOnce.Do(func() { first = true })
	if !first {
		select {
		case <-r.done:
			return nil
		case <-ctx.Done():
			r.hardStop()
			<-r.done
			return r.gaveUpErr(ctx.Err())
		}
	}

	r.mu.Lock()
	r.closed.Store(true)
	r.mu.Unlock()
	r.engine.Drain()

	var err error
	for {
		r.mu.Lock()
		c := r.crew
		if c == nil {
			c = r.startLocked(ctx)
		}
		r.mu.Unlock()
		select {
		case <-c.done:
		case <-ctx.Done():
			err = ctx.Err()
			r.hardStop()
			<-c.done
		}
		r.mu.Lock()
		paused := c.byRun
		r.mu.Unlock()
		if !paused {
			break
		}
		// Run's ctx ended before this Shutdown began and its workers have
		// now stopped: start ours.
	}
	r.engine.Close() // what is left in the process goes to lose
	close(r.done)
	if err != nil {
		return r.gaveUpErr(err)
	}
	return nil
}

// lose hands values that a stopping Runner could not handle to OnDrop, and
// counts them for the error of a Shutdown that gave up.
func (r *Runner[K, V]) lose(key K, vs []V) {
	r.lost.Add(int64(len(vs)))
	r.drop(key, vs, 0, ErrClosed, 0)
}

// dropPending hands a burst still debouncing when Shutdown began to
// OnDrop (Config.DropPendingOnShutdown).
func (r *Runner[K, V]) dropPending(key K, vs []V) { r.drop(key, vs, 0, ErrClosed, 0) }

// gaveUpErr is the error of a Shutdown whose ctx ended before the drain
// did; call it once the Runner is closed.
func (r *Runner[K, V]) gaveUpErr(err error) error {
	if r.cfg.Store != nil {
		return fmt.Errorf("pacer: Shutdown gave up, the batches it cut short went back to the store: %w", err)
	}
	return fmt.Errorf("pacer: Shutdown gave up, %d values went to OnDrop: %w", r.lost.Load(), err)
}

// hardStop cancels the running handlers: their batches go back to their
// keys, and the workers, whose Gets end with their ctx, return.
func (r *Runner[K, V]) hardStop() {
	r.mu.Lock()
	r.gaveUp = true // for workers that have yet to start
	if r.crew != nil {
		r.crew.cancel(ErrClosed)
	}
	r.mu.Unlock()
}
