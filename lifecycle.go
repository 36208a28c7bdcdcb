package pacer

import (
	"context"
	"sync"
)

// Run starts Config.Workers workers and blocks until they are done: when
// ctx ends, or when Shutdown has drained the Runner. It returns nil after a
// Shutdown. When ctx ends first, Run stops the Runner as a Shutdown whose
// ctx expired would: the handlers' ctx is cancelled, intake is closed, and
// whatever is left goes to OnDrop with ErrClosed; Run then returns
// ctx.Err(). Run may be called once: it returns ErrRunning while another Run
// runs, and ErrClosed once Shutdown began or the Runner stopped.
func (r *Runner[K, V]) Run(ctx context.Context) error {
	r.mu.Lock()
	switch {
	case r.closed.Load() || r.phase == phaseStopped:
		r.mu.Unlock()
		return ErrClosed
	case r.phase == phaseRunning:
		r.mu.Unlock()
		return ErrRunning
	}
	serve := r.serveLocked(ctx)
	r.mu.Unlock()
	return serve()
}

// serveLocked starts the workers on ctx and returns a function that waits
// for them and then marks the Runner stopped. The caller holds r.mu.
func (r *Runner[K, V]) serveLocked(ctx context.Context) (wait func() error) {
	r.phase = phaseRunning
	wctx, cancel := context.WithCancelCause(ctx)
	r.cancel = cancel
	if r.gaveUp {
		cancel(ErrClosed)
	}
	var wg sync.WaitGroup
	for range r.cfg.Workers {
		wg.Go(func() { r.work(wctx) })
	}
	return func() error {
		wg.Wait()
		cancel(nil)
		// Read ctx before closing stopped: that releases Shutdown, after
		// which the caller may well cancel ctx, and Run must still report
		// the Shutdown, not the cancellation.
		err := ctx.Err()
		r.mu.Lock()
		r.phase = phaseStopped
		r.mu.Unlock()
		close(r.stopped)
		if err != nil {
			_ = r.Shutdown(context.Background()) // no worker is left to wait for
			return err
		}
		return nil
	}
}

// Shutdown stops the Runner gracefully: Add returns ErrClosed from now on,
// bursts still being debounced are queued at once (or handed to OnDrop with
// ErrClosed, with Config.DropPendingOnShutdown), and the workers handle
// everything queued, retries included, until nothing but held keys is
// left. Then Run returns, held keys go to OnDrop with ErrClosed, and
// Shutdown returns nil once every goroutine of the Runner has returned.
//
// If Run has not started, Shutdown starts the workers itself and drains the
// Runner the same way, so a Shutdown that wins the race with a
// `go r.Run(ctx)` loses nothing; that Run then returns ErrClosed. Once
// Run's ctx has ended, nothing is handled any more: everything left goes to
// OnDrop with ErrClosed.
//
// If ctx ends first, Shutdown cancels the handlers' ctx (cause ErrClosed),
// waits for the running calls to return, hands everything not finished to
// OnDrop with ErrClosed, and returns ctx.Err(). Handlers must therefore
// return when their ctx ends.
//
// Shutdown is idempotent and safe to call concurrently; every call waits
// for the first to finish. It waits for the workers, which call the
// handler, OnEvent and OnDrop, so it must not be called from those: it would
// never return.
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
			return ctx.Err()
		}
	}

	r.closed.Store(true)
	if r.cfg.DropPendingOnShutdown {
		r.dropping.Store(true)
	}
	if r.intake != nil {
		r.intake.close()
	}
	r.mu.Lock()
	var serve func() error
	if r.phase == phaseIdle {
		// The workers' ctx never ends by itself; hardStop cancels it.
		serve = r.serveLocked(context.WithoutCancel(ctx))
	}
	stopped := r.phase == phaseStopped
	r.mu.Unlock()
	var served chan struct{}
	if serve != nil {
		served = make(chan struct{})
		go func() {
			defer close(served)
			_ = serve()
		}()
	}
	if stopped {
		r.store.Stop()
	} else {
		r.draining.Store(true)
		r.checkDrained()
	}

	var err error
	select {
	case <-r.stopped:
	case <-ctx.Done():
		err = ctx.Err()
		r.hardStop()
		<-r.stopped
	}
	if served != nil {
		<-served
	}
	r.store.Close(func(key K, vs []V) { r.drop(key, vs, 0, ErrClosed, 0) })
	close(r.done)
	return err
}

// hardStop cancels the running handlers and stops handing out batches.
func (r *Runner[K, V]) hardStop() {
	r.mu.Lock()
	r.gaveUp = true // for workers a Shutdown before Run has yet to start
	if r.cancel != nil {
		r.cancel(ErrClosed)
	}
	r.mu.Unlock()
	r.store.Stop()
}

// checkDrained stops the store once a draining Runner has nothing left to
// do but held keys; the workers then return.
func (r *Runner[K, V]) checkDrained() {
	if r.draining.Load() && r.store.Active() == 0 {
		r.store.Stop()
	}
}
