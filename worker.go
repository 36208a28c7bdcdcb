package pacer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
	"unicode/utf8"

	"github.com/pacerkit/pacer/internal/callctx"
	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/window"
)

// work is one worker: it leases batches and handles them until the engine
// is drained or ctx ends.
func (r *Runner[K, V]) work(ctx context.Context) {
	for {
		l, err := r.engine.Get(ctx)
		if err != nil {
			return
		}
		r.process(ctx, l)
	}
}

// process handles one leased batch and ends the lease. A lease that
// lapsed by the Runner's clock (see Config.LeaseTTL) before the handler
// started is neither handled nor ended: another holder may have it.
func (r *Runner[K, V]) process(ctx context.Context, l engine.Lease[K, V]) {
	if r.lapsed(l) {
		return
	}
	if err := r.unfit(l); err != nil {
		r.finish(ctx, l, err, 0, false) // without a call
		return
	}
	kw, pass := r.keyWindowGate(ctx, l)
	if !pass {
		return
	}
	// Reading the clock is a good part of the cost of a batch: only do it
	// when someone looks at the durations.
	timed := r.cfg.OnEvent != nil || r.log.Enabled(ctx, slog.LevelWarn)
	var leased, start time.Time
	if timed {
		leased = r.clk.Now()
	}
	lctx, kept := r.engine.Keep(ctx, l)
	if after, ok := r.admit(lctx, l, kw); !ok {
		// The Runner is stopping, or lost the lease, or the key's window or
		// limit says later: nothing ran, so no attempt was used.
		if kept.Over() == nil {
			r.deferKey(ctx, l, after)
		}
		return
	}
	if timed {
		start = r.clk.Now()
		r.emit(EventStarted, l.Key, l.Attempt, len(l.Values), start.Sub(leased), 0, nil)
		if r.log.Enabled(ctx, slog.LevelDebug) {
			r.logf(slog.LevelDebug, "pacer: batch started", l.Key, slog.Int("size", len(l.Values)), slog.Int("attempt", l.Attempt))
		}
	}

	// The handler's ctx tells a ratelimit.Transport where to count its
	// waits and which token this call already paid.
	hctx := context.Context(&callctx.Call{Context: lctx, Paid: r.cfg.Limiter, Waited: &r.c.rateWait, Attempt: callctx.Attempt32(l.Attempt)})
	if l.Carried != nil {
		hctx = callctx.WithCarried(hctx, l.Carried)
	}
	cancel := context.CancelFunc(func() {})
	if r.window != nil {
		hctx, cancel = r.window.Context(hctx)
	}
	if kw != nil {
		var cancelKey context.CancelFunc
		hctx, cancelKey = kw.Context(hctx)
		cancelWindow := cancel
		cancel = func() { cancelKey(); cancelWindow() }
	}
	if r.lapsed(l) { // the last look, right before the handler
		cancel()
		kept.Over()
		return
	}
	err := r.call(hctx, l)
	windowClosed := errors.Is(context.Cause(hctx), window.ErrOutside)
	cancel()
	lost := kept.Over()
	var took time.Duration
	if timed {
		took = r.clk.Now().Sub(start)
	}
	r.c.batches.Add(1)
	if lost != nil {
		// The batch's next holder runs it: the engine would refuse any
		// outcome from this one.
		if err == nil {
			r.c.handled.Add(uint64(len(l.Values)))
		}
		return
	}
	r.finish(ctx, l, err, took, windowClosed)
}

// unfit returns why a leased batch must not reach the handler: its values
// no longer decode (it is dropped, whatever Config.Exhausted says), or it
// is past its last attempt, which lapsed with its holder.
func (r *Runner[K, V]) unfit(l engine.Lease[K, V]) error {
	if err := l.Unreadable(); err != nil {
		return Permanent(err)
	}
	if n := r.cfg.Retry.Attempts; n > 0 && l.Attempt > n {
		return fmt.Errorf("%w: attempt %d of %d lapsed, its holder gone", ErrLeaseLost, l.Attempt-1, n)
	}
	return nil
}

// lapsed reports whether l's lease lapsed by the Runner's clock before its
// handler started, and logs so: the process stalled (a pause, SIGSTOP, a
// long GC) or waited to be admitted while the renewals failed.
func (r *Runner[K, V]) lapsed(l engine.Lease[K, V]) bool {
	if !l.Lapsed(r.clk) {
		return false
	}
	r.logf(slog.LevelWarn, "pacer: lease lapsed before the handler started, the batch is left to its next holder", l.Key, slog.Int("attempt", l.Attempt))
	return true
}

// end finishes l as o says, and reports whether its key has values left.
func (r *Runner[K, V]) end(ctx context.Context, l engine.Lease[K, V], o store.Outcome) (more bool) {
	more, err := r.engine.Finish(ctx, l, o)
	r.ended(l, err)
	return more
}

// ended logs the failure of the call that ended l: the engine lost the
// lease, or could not be reached; either way the lease lapses and the
// batch runs again, with the next attempt.
func (r *Runner[K, V]) ended(l engine.Lease[K, V], err error) {
	if err != nil {
		r.logf(slog.LevelWarn, "pacer: could not end the lease, the batch will run again", l.Key, slog.Int("attempt", l.Attempt), slog.Any("err", err))
	}
}

// acked hears of the end of an Ack that went on in the background
// (Config.AckInBackground), which Finish did not report.
func (r *Runner[K, V]) acked(l engine.Lease[K, V], more bool, err error) {
	r.ended(l, err)
	r.rerun(l, more)
}

// admit waits until the batch may start: the window is open and the
// Limiter gave a token; then the key's gate (keyAdmit) lets it through. It
// reports false if ctx ended first, or if l's lease lapsed during a wait,
// or, with how long to defer the batch, if the key's gate said not yet. A
// batch takes at most one token: if the window closes while the Limiter
// makes it wait, it keeps the token and waits for the window to open
// again.
func (r *Runner[K, V]) admit(ctx context.Context, l engine.Lease[K, V], kw *window.Schedule) (after time.Duration, ok bool) {
	if after, ok := r.admitRunner(ctx, l); !ok {
		return after, false
	}
	return r.keyAdmit(ctx, l, kw)
}

// admitRunner waits for the Runner's own window and Limiter; see admit.
// With a KeyLimit it first looks whether the key has a token, so as not
// to take the Limiter's for a batch that is deferred at once: it then
// returns how long to defer it, with ok false.
func (r *Runner[K, V]) admitRunner(ctx context.Context, l engine.Lease[K, V]) (after time.Duration, ok bool) {
	paid := r.cfg.Limiter == nil
	for {
		if r.window != nil {
			if now := r.clk.Now(); !r.window.Contains(now) {
				r.emit(EventSkipped, l.Key, l.Attempt, len(l.Values), r.window.NextOpen(now).Sub(now), 0, nil)
				r.logf(slog.LevelDebug, "pacer: window closed, batch waits", l.Key, slog.Time("opens", r.window.NextOpen(now)))
				if r.window.Wait(ctx) != nil || r.lapsed(l) {
					return 0, false
				}
			}
		}
		if !paid {
			if wait, has := r.keyHasToken(ctx, l); !has {
				return wait, false
			}
			t := r.clk.Now()
			r.limiterWaits.Add(1)
			err := r.cfg.Limiter.Wait(ctx)
			r.limiterWaits.Add(-1)
			r.c.rateWait.Add(int64(r.clk.Now().Sub(t)))
			if r.lapsed(l) {
				return 0, false
			}
			if err != nil {
				if ctx.Err() != nil {
					return 0, false
				}
				// The Limiter cannot serve in time (e.g. before ctx's
				// deadline): back off rather than spin, then ask again.
				r.logf(slog.LevelWarn, "pacer: limiter refused", l.Key, slog.Any("err", err))
				if !timing.Sleep(r.clk, r.cfg.Retry.Initial, ctx.Done()) || r.lapsed(l) {
					return 0, false
				}
				continue
			}
			paid = true
		}
		if r.window == nil || r.window.Contains(r.clk.Now()) {
			return 0, true
		}
	}
}

// call runs the handler, turning a panic into a *PanicError.
func (r *Runner[K, V]) call(ctx context.Context, l engine.Lease[K, V]) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
			r.logf(slog.LevelError, "pacer: handler panicked", l.Key, slog.Any("panic", v), slog.Int("attempt", l.Attempt))
		}
	}()
	return r.handle(ctx, l.Key, l.Values)
}

// finish ends the lease according to the handler's error.
func (r *Runner[K, V]) finish(ctx context.Context, l engine.Lease[K, V], err error, took time.Duration, windowClosed bool) {
	n := len(l.Values)
	if err == nil {
		more := r.end(ctx, l, store.Outcome{Kind: store.Ack})
		r.c.handled.Add(uint64(n))
		r.emit(EventFinished, l.Key, l.Attempt, n, 0, took, nil)
		if r.log.Enabled(ctx, slog.LevelDebug) {
			r.logf(slog.LevelDebug, "pacer: batch finished", l.Key, slog.Int("size", n), slog.Duration("took", took))
		}
		r.rerun(l, more)
		return
	}
	if ctx.Err() != nil {
		// Cut short by the end of Run's ctx or by a Shutdown that gave up:
		// not the handler's fault. The batch goes back to its key without
		// using an attempt, for a later Run or Shutdown to handle, or for a
		// Shutdown that gave up to hand to OnDrop (or, with a Store, for
		// another instance to take at once).
		r.end(ctx, l, store.Outcome{Kind: store.Defer})
		return
	}
	permanent, after, hasAfter, pause := classify(err)
	if pause {
		// The remote asked everyone to wait, whatever becomes of this batch.
		r.pauseAll(l.Key, after)
	} else if hasAfter {
		// This key's remote asked it to wait: so do the key's other users.
		r.pauseKey(ctx, l.Key, after)
	}
	if windowClosed && !permanent {
		// Cut short by a window (the Runner's or the key's): it runs again
		// when the window opens, and the attempt does not count.
		opens := r.reopens(l.Key, r.clk.Now())
		r.emitBlocking(EventRetry, l, opens, took, err)
		r.logf(slog.LevelInfo, "pacer: window closed during batch", l.Key, slog.Int("size", n), slog.Any("err", err))
		r.end(ctx, l, store.Outcome{Kind: store.Defer, After: opens})
		return
	}
	switch {
	case permanent:
		// OnDrop runs before the key's next values may start, so a
		// dead-letter hook sees a key's drops in order.
		r.drop(l.Key, l.Values, l.Attempt, err, took)
		r.dropped(ctx, l, err)
	case r.cfg.Retry.Attempts > 0 && l.Attempt >= r.cfg.Retry.Attempts:
		r.exhausted(ctx, l, err, took)
	default:
		if !hasAfter {
			after = r.cfg.Retry.Delay(l.Attempt)
		}
		r.c.retries.Add(1)
		r.emitBlocking(EventRetry, l, after, took, err)
		r.logf(slog.LevelWarn, "pacer: batch failed, will retry", l.Key, slog.Int("size", n), slog.Int("attempt", l.Attempt), slog.Duration("after", after), slog.Any("err", err))
		r.end(ctx, l, store.Outcome{Kind: store.Retry, After: after, Err: errText(err)})
	}
}

// pauseAll pauses the Limiter for every key for d, and tells Adaptive of
// the pressure.
func (r *Runner[K, V]) pauseAll(key K, d time.Duration) {
	if r.pauser != nil && d > 0 {
		r.pauser.PauseFor(d)
		r.paused(d)
		r.logf(slog.LevelInfo, "pacer: limiter paused for every key", key, slog.Duration("for", d))
	}
	if r.adapt != nil {
		r.adapt.PausedAt(r.clk.Now())
	}
}

// exhausted ends a batch that used up its attempts, per Config.Exhausted.
func (r *Runner[K, V]) exhausted(ctx context.Context, l engine.Lease[K, V], err error, took time.Duration) {
	if r.cfg.Exhausted == ExhaustedHold {
		r.end(ctx, l, store.Outcome{Kind: store.Hold, Err: errText(err)}) // first: OnEvent may Release the key
		r.emitBlocking(EventHeld, l, 0, took, err)
		r.logf(slog.LevelWarn, "pacer: attempts used up, key held", l.Key, slog.Int("size", len(l.Values)), slog.Int("attempt", l.Attempt), slog.Any("err", err))
		return
	}
	r.drop(l.Key, l.Values, l.Attempt, err, took)
	r.dropped(ctx, l, err)
}

// maxErrText is the most bytes of a handler's error that go with a
// retried or held batch to the engine (store.Outcome.Err), which keeps
// them with the key until the batch ends: enough for an operator to read
// why, bounded whatever the handler's error says.
const maxErrText = 1 << 10

// errText returns the text of err, cut to maxErrText bytes at a rune's
// start and marked with an ellipsis when it is longer.
func errText(err error) string {
	s := err.Error()
	if len(s) <= maxErrText {
		return s
	}
	const more = "…"
	cut := maxErrText - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

// dropped ends a lease whose batch went to OnDrop.
func (r *Runner[K, V]) dropped(ctx context.Context, l engine.Lease[K, V], err error) {
	r.rerun(l, r.end(ctx, l, store.Outcome{Kind: store.Drop, Err: err.Error()}))
}

// rerun reports a key that went back to the queue with values left.
func (r *Runner[K, V]) rerun(l engine.Lease[K, V], more bool) {
	if !more {
		return
	}
	r.c.reruns.Add(1)
	r.emit(EventRerun, l.Key, l.Attempt, len(l.Values), 0, 0, nil)
}
