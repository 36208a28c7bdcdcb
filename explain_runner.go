package pacer

import (
	"context"
	"errors"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
)

// ErrNoInspector is returned by Explain of a Runner whose Config.Store
// does not implement store.Inspector, and so cannot show one key.
var ErrNoInspector = errors.New("pacer: the Runner's store cannot be inspected (it does not implement store.Inspector)")

// Explain says why key is not running now: what its values are doing in
// the engine, and what of the Runner holds it back (see [Explanation]).
// It changes nothing. It returns ctx.Err() if ctx is done.
//
// With a Config.Store it reads the key and whether the queue is paused
// from the engine, in two calls that cost what the engine's Inspector.Key
// and store.Operator's QueuePaused cost (its Stats, for a store that is no
// Operator), and returns the engine's error if one fails, or
// ErrNoInspector. In the process it reads the Runner's own state, in
// O(log n) plus, for a ready key, up to store.MaxAhead steps (and, with
// Config.Tenant, up to store.MaxAhead more to count TenantsAhead); there it
// knows no Since for a ready or a leased key, and a leased key's Holder
// is Config.Instance. The windows' and the limits' reasons are given
// for every key that holds values, whatever its state: whether a leased
// key's batch already passed them is not known. With Config.KeyLimit it
// asks the key's limit when its next token comes (PeekKey, which takes
// nothing: one round trip for redisrate), and returns its error.
func (r *Runner[K, V]) Explain(ctx context.Context, key K) (Explanation, error) {
	if err := ctx.Err(); err != nil {
		return Explanation{}, err
	}
	st, err := r.engine.Key(ctx, key)
	if err != nil {
		if errors.Is(err, engine.ErrNoInspector) {
			return Explanation{}, ErrNoInspector
		}
		return Explanation{}, err
	}
	x := explained(st.Info, st.Found, st.QueuePaused)
	x.Key = formatKey(key)
	x.At = r.clk.Now()
	if x.State == 0 {
		return x, nil
	}
	x.MaxAttempts = r.cfg.Retry.Attempts
	if r.cfg.PerKey > 1 {
		x.PerKey = r.cfg.PerKey
	}
	if r.cfg.Store == nil && x.State == store.Leased {
		x.Holder = r.cfg.Instance
	}
	if r.window != nil && !r.window.Contains(x.At) {
		x.WindowClosedUntil = r.window.NextOpen(x.At)
	}
	r.limited(&x)
	if err := r.keyGated(ctx, key, &x); err != nil {
		return Explanation{}, err
	}
	return x, nil
}

// readyAter is a Limiter that can tell when its next token comes, as
// ratelimit.Bucket can.
type readyAter interface {
	ReadyAt(t time.Time, n int) (time.Time, bool)
}

// pauseTeller is a Limiter that can tell until when it is paused, as
// ratelimit.Bucket can.
type pauseTeller interface {
	Stats() ratelimit.Stats
}

// limited sets x's limiter reasons, at x.At: the pause the Limiter tells
// of, or else the one the Runner made (pauseAll); the next token, when
// the Limiter tells it and it is later than the pause; and, for a
// Limiter that tells neither, RateLimited while a batch waits for it.
func (r *Runner[K, V]) limited(x *Explanation) {
	lim := r.cfg.Limiter
	if lim == nil {
		return
	}
	now := x.At
	var paused time.Time
	if pt, ok := lim.(pauseTeller); ok {
		paused = pt.Stats().PausedUntil
	} else if ns := r.pausedUntil.Load(); ns != 0 {
		paused = time.Unix(0, ns)
	}
	if paused.After(now) {
		x.LimiterPausedUntil, x.RateLimited = paused, true
	}
	ra, ok := lim.(readyAter)
	if !ok {
		x.RateLimited = x.RateLimited || r.limiterWaits.Load() > 0
		return
	}
	if at, ok := ra.ReadyAt(now, 1); ok && at.After(now) && at.After(paused) {
		x.LimiterNextToken, x.RateLimited = at, true
	}
}

// ExplainStored is the engine's part of [Runner.Explain], for a tool that
// has a store but no Runner (a command line): why key, as stored, of
// queue is not leased now. It says what the key's values are doing and
// whether the key is paused, and whether the queue is paused: one more
// call, store.Operator's QueuePaused when s implements it, else, when s
// implements store.Store, its Stats (which may visit every key of the
// queue). Key is the stored key, as is the Explanation's Key; MaxAttempts
// is 0 (unknown) and nothing is said of a Runner's window or limiter. At
// is the process's clock. It returns ctx.Err() if ctx is done, and the store's error.
func ExplainStored(ctx context.Context, s store.Inspector, queue, key string) (Explanation, error) {
	if s == nil {
		return Explanation{}, errors.New("pacer: ExplainStored needs a store.Inspector, got nil")
	}
	if err := ctx.Err(); err != nil {
		return Explanation{}, err
	}
	info, found, err := s.Key(ctx, queue, key)
	if err != nil {
		return Explanation{}, err
	}
	queuePaused, err := queuePaused(ctx, s, queue)
	if err != nil {
		return Explanation{}, err
	}
	x := explained(info, found, queuePaused)
	x.Key, x.StoredKey, x.At = key, key, time.Now()
	return x, nil
}

// queuePaused reports whether queue of s is paused: QueuePaused of a
// store.Operator, Stats.Paused of any other store.Store, and false for
// what is neither.
func queuePaused(ctx context.Context, s any, queue string) (bool, error) {
	switch s := s.(type) {
	case store.Operator:
		return s.QueuePaused(ctx, queue)
	case store.Store:
		st, err := s.Stats(ctx, queue)
		return st.Paused, err
	}
	return false, nil
}

// paused records that pauseAll paused the Limiter for d from now, for
// Explain: a pause only ever moves later, as a Pauser's does.
func (r *Runner[K, V]) paused(d time.Duration) {
	end := timing.AddNanos(r.clk.Now().UnixNano(), d) // saturated: a pause for ever
	for {
		old := r.pausedUntil.Load()
		if old >= end || r.pausedUntil.CompareAndSwap(old, end) {
			return
		}
	}
}
