package pacer

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/window"
)

// keyGate decides whether l may start now as far as its key's own window
// (Config.KeyWindow) and limit (Config.KeyLimit) go. If not, it defers l,
// without using an attempt, until they may let it, and reports false: the
// worker goes on to another key instead of waiting. Otherwise it returns
// the key's window, on the Runner's clock, for the handler's ctx to end at
// its close (nil if the key has none), having taken the key's token.
//
// The window comes first: a key outside it takes no token.
func (r *Runner[K, V]) keyGate(ctx context.Context, l engine.Lease[K, V]) (*window.Schedule, bool) {
	var kw *window.Schedule
	if r.cfg.KeyWindow != nil {
		if s := r.cfg.KeyWindow(l.Key); s != nil {
			now := r.clk.Now()
			switch {
			case s.IsZero():
				r.logf(slog.LevelError, "pacer: Config.KeyWindow gave the zero Schedule, which never opens: batch deferred", l.Key, slog.Duration("for", r.cfg.Retry.Max))
				r.deferKey(ctx, l, r.cfg.Retry.Max)
				return nil, false
			case !s.Contains(now):
				r.c.keyWindowed.Add(1)
				opens := s.NextOpen(now)
				r.logf(slog.LevelDebug, "pacer: key outside its window, batch deferred", l.Key, slog.Time("opens", opens))
				r.deferKey(ctx, l, opens.Sub(now))
				return nil, false
			}
			w := s.WithClock(r.cfg.Clock)
			kw = &w
		}
	}
	if r.cfg.KeyLimit != nil {
		wait, err := r.cfg.KeyLimit.TakeKey(ctx, l.Key)
		switch {
		case err != nil && ctx.Err() != nil:
			// The Runner is stopping: the batch goes back as it came.
			r.end(ctx, l, store.Outcome{Kind: store.Defer})
			return nil, false
		case err != nil:
			r.logf(slog.LevelWarn, "pacer: Config.KeyLimit failed, batch deferred", l.Key, slog.Duration("for", r.cfg.Retry.Initial), slog.Any("err", err))
			r.deferKey(ctx, l, r.cfg.Retry.Initial)
			return nil, false
		case wait > 0:
			r.c.keyLimited.Add(1)
			if r.log.Enabled(ctx, slog.LevelDebug) {
				r.logf(slog.LevelDebug, "pacer: key has no token, batch deferred", l.Key, slog.Duration("for", wait))
			}
			r.deferKey(ctx, l, wait)
			return nil, false
		}
	}
	return kw, true
}

// deferKey ends l's lease with a Defer of d: its batch stays at the head
// of its key, which is ready again d from now, at the tail.
func (r *Runner[K, V]) deferKey(ctx context.Context, l engine.Lease[K, V], d time.Duration) {
	r.emit(EventSkipped, l.Key, l.Attempt, len(l.Values), d, 0, nil)
	r.end(ctx, l, store.Outcome{Kind: store.Defer, After: d})
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
	if r.cfg.KeyLimit == nil {
		return nil
	}
	wait, err := r.cfg.KeyLimit.PeekKey(ctx, key)
	if err != nil {
		return err
	}
	if wait > 0 {
		x.KeyTokenAt = x.At.Add(wait)
	}
	return nil
}
