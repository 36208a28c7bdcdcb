package pacer

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/window"
)

// The key's gate: its own window (Config.KeyWindow) and limits
// (Config.KeyLimit, and Config.KeyRate without a Store: a Store takes
// KeyRate's tokens in its claims). A batch that either turns away is
// deferred, without using an attempt, until they may let it, and the
// worker goes on to another key instead of waiting. The window is looked at first, as soon
// as the batch is leased; the key's token is taken last, once the
// Runner's Window and Limiter let the batch start, so that no token is
// counted earlier than the call it pays for.

// keyWindowGate defers l if its key is outside its own window, and
// reports false then. Otherwise it returns the key's window on the
// Runner's clock, for the handler's ctx to end at its close (nil if the
// key has none).
func (r *Runner[K, V]) keyWindowGate(ctx context.Context, l engine.Lease[K, V]) (*window.Schedule, bool) {
	if r.cfg.KeyWindow == nil {
		return nil, true
	}
	s := r.cfg.KeyWindow(l.Key)
	if s == nil {
		return nil, true
	}
	if after, open := r.keyWindowOpen(l, s); !open {
		r.deferKey(ctx, l, after)
		return nil, false
	}
	w := s.WithClock(r.cfg.Clock)
	return &w, true
}

// keyWindowOpen reports whether s, key's window, is open now, or else how
// long until it opens, and counts a deferral.
func (r *Runner[K, V]) keyWindowOpen(l engine.Lease[K, V], s *window.Schedule) (time.Duration, bool) {
	now := r.clk.Now()
	switch {
	case s.IsZero():
		r.logf(slog.LevelError, "pacer: Config.KeyWindow gave the zero Schedule, which never opens: batch deferred", l.Key, slog.Duration("for", r.cfg.Retry.Max))
		return r.cfg.Retry.Max, false
	case !s.Contains(now):
		r.c.keyWindowed.Add(1)
		opens := s.NextOpen(now)
		r.logf(slog.LevelDebug, "pacer: key outside its window, batch deferred", l.Key, slog.Time("opens", opens))
		return opens.Sub(now), false
	}
	return 0, true
}

// keyAdmit is the last step before the handler: the key's window, on the
// Runner's clock (kw, nil for none), must still be open, and the key's
// limit must give its token. Otherwise it returns how long to defer the
// batch, with ok false.
func (r *Runner[K, V]) keyAdmit(ctx context.Context, l engine.Lease[K, V], kw *window.Schedule) (after time.Duration, ok bool) {
	if kw != nil {
		// It may have closed while the batch waited for the Runner's
		// Window or Limiter.
		if after, open := r.keyWindowOpen(l, kw); !open {
			return after, false
		}
	}
	if r.keyRate != nil {
		// Asked first, and taken last, so that a refusal here spends
		// no token of KeyLimit's.
		if wait, _ := r.keyRate.PeekKey(ctx, l.Key); wait > 0 {
			return r.keyWait(ctx, l, wait, nil)
		}
	}
	if r.cfg.KeyLimit != nil {
		wait, err := r.cfg.KeyLimit.TakeKey(ctx, l.Key)
		if after, ok := r.keyWait(ctx, l, wait, err); !ok {
			return after, false
		}
	}
	if r.keyRate != nil {
		wait, err := r.keyRate.TakeKey(ctx, l.Key)
		return r.keyWait(ctx, l, wait, err)
	}
	return 0, true
}

// keyHasToken reports whether the key's limit has a token for l's key
// now, taking nothing, or else how long until it has; true without a
// KeyLimit or KeyRate in the process, or when it cannot tell (keyAdmit
// then decides).
func (r *Runner[K, V]) keyHasToken(ctx context.Context, l engine.Lease[K, V]) (time.Duration, bool) {
	wait, err := r.keyTokenIn(ctx, l.Key)
	if err != nil || wait <= 0 {
		return 0, true
	}
	return r.keyWait(ctx, l, wait, nil)
}

// keyTokenIn returns how long until key has a token of both KeyLimit and
// KeyRate's buckets in the process, taking nothing: 0 if it has, or
// without either.
func (r *Runner[K, V]) keyTokenIn(ctx context.Context, key K) (time.Duration, error) {
	var wait time.Duration
	if r.keyRate != nil {
		wait, _ = r.keyRate.PeekKey(ctx, key)
	}
	if r.cfg.KeyLimit != nil {
		w, err := r.cfg.KeyLimit.PeekKey(ctx, key)
		if err != nil {
			return 0, err
		}
		wait = max(wait, w)
	}
	return wait, nil
}

// keyWait turns the answer of the key's limit into keyAdmit's.
func (r *Runner[K, V]) keyWait(ctx context.Context, l engine.Lease[K, V], wait time.Duration, err error) (time.Duration, bool) {
	switch {
	case err != nil && ctx.Err() != nil:
		return 0, false // the Runner is stopping: the batch goes back as it came
	case err != nil:
		r.logf(slog.LevelWarn, "pacer: Config.KeyLimit failed, batch deferred", l.Key, slog.Duration("for", r.cfg.Retry.Initial), slog.Any("err", err))
		return r.cfg.Retry.Initial, false
	case wait > 0:
		r.c.keyLimited.Add(1)
		if r.log.Enabled(ctx, slog.LevelDebug) {
			r.logf(slog.LevelDebug, "pacer: key has no token, batch deferred", l.Key, slog.Duration("for", wait))
		}
		return wait, false
	}
	return 0, true
}

// deferKey ends l's lease with a Defer of d: its batch stays at the head
// of its key, which is ready again d from now, at the tail. A deferral
// for later than now is reported as EventSkipped.
func (r *Runner[K, V]) deferKey(ctx context.Context, l engine.Lease[K, V], d time.Duration) {
	r.end(ctx, l, store.Outcome{Kind: store.Defer, After: d})
	if d > 0 { // after the engine has the delay, which an observer may then play out
		r.emit(EventSkipped, l.Key, l.Attempt, len(l.Values), d, 0, nil)
	}
}

// reopens returns how long from now until both the Runner's window and
// key's own are open, after a window cut key's batch short, as far as
// each of them can tell on its own; the key's gate looks again then. It
// also counts a cut by the key's window.
func (r *Runner[K, V]) reopens(key K, now time.Time) time.Duration {
	var at time.Time
	if r.window != nil && !r.window.Contains(now) {
		at = r.window.NextOpen(now)
	}
	if r.cfg.KeyWindow != nil {
		if s := r.cfg.KeyWindow(key); s != nil && !s.IsZero() && !s.Contains(now) {
			r.c.keyWindowed.Add(1)
			if o := s.NextOpen(now); o.After(at) {
				at = o
			}
		}
	}
	return max(at.Sub(now), 0)
}

// pauseKey pauses key's bucket in Config.KeyLimit for d, as the
// handler's RetryAfter asked, so that every user of the KeyLimit holds
// the key.
func (r *Runner[K, V]) pauseKey(ctx context.Context, key K, d time.Duration) {
	if r.cfg.KeyLimit == nil || d <= 0 {
		return
	}
	if err := r.cfg.KeyLimit.PauseKeyFor(ctx, key, d); err != nil {
		r.logf(slog.LevelWarn, "pacer: could not pause the key's limit", key, slog.Duration("for", d), slog.Any("err", err))
		return
	}
	r.logf(slog.LevelInfo, "pacer: key's limit paused", key, slog.Duration("for", d))
}

// isNilPointer reports whether v is an interface that holds a nil
// pointer, such as a *ratelimit.Keyed never made, which would panic at
// the first batch.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// keyGated sets x's reasons of key's own window and limit, at x.At.
func (r *Runner[K, V]) keyGated(ctx context.Context, key K, x *Explanation) error {
	if r.cfg.KeyWindow != nil {
		if s := r.cfg.KeyWindow(key); s != nil && !s.Contains(x.At) {
			x.KeyWindowClosedUntil = s.NextOpen(x.At) // zero for the zero Schedule: never
		}
	}
	wait, err := r.keyTokenIn(ctx, key)
	if err != nil {
		return err
	}
	if at := x.At.Add(wait); wait > 0 && at.After(x.KeyTokenAt) {
		x.KeyTokenAt = at
	}
	return nil
}

// keyRateBuckets returns the buckets of c.KeyRate, which is on, in the
// process: one per key, as the store would keep them.
func (c Config[K, V]) keyRateBuckets() *ratelimit.Keyed[K] {
	k, err := ratelimit.NewKeyed[K](ratelimit.KeyedConfig{
		Rate:  float64(time.Second) / float64(c.KeyRate.Interval),
		Burst: max(c.KeyRate.Burst, 1),
		Clock: c.Clock,
	})
	if err != nil {
		// validate bounds KeyRate within what NewKeyed takes.
		panic(fmt.Sprintf("pacer: Config.KeyRate %+v: %v", c.KeyRate, err))
	}
	return k
}
