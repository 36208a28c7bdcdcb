package ratelimit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/pacerkit/pacer/internal/timing"
)

// Bucket is a token bucket that everyone sharing a remote API waits on, and
// that a Retry-After seen by one caller pauses for all of them.
//
// It refills at Rate tokens per second up to Burst; each event takes one
// token (n for WaitN/AllowN). The token math is golang.org/x/time/rate's,
// fed with the injected clock's time.
//
// A pause (PauseUntil, PauseFor) holds every current and future event until
// its end. A later pause extends it, an earlier one never shortens it.
// Waiters already sleeping are woken and wait for the new end, and the
// tokens they had reserved are void: every pause empties the bucket, which
// then refills at the rate from the pause's start, and all waiters reserve
// again at its end. So at most min(Burst, Rate·pause) events pass at the
// pause's end, then the rate applies again. In adaptive mode a pause also
// cuts the rate (see BucketConfig.Adaptive).
//
// A Bucket is safe for concurrent use. Use NewBucket; the zero value is not
// usable. It owns no goroutines, so it needs no Close.
type Bucket struct {
	clk   timing.Clock
	real  bool // clk is timing.Real
	cfg   BucketConfig
	lim   atomic.Pointer[rate.Limiter]
	pause atomic.Int64 // end of the latest pause, Unix nanoseconds; 0 if none
	next  atomic.Int64 // Unix nanoseconds of the next adaptive recovery step; MaxInt64 if none

	mu       sync.Mutex
	pauseEnd time.Time     // same as pause, for the slow path
	changed  chan struct{} // closed and replaced when a pause begins or moves later
	rate     float64       // the current rate (below cfg.Rate after an adaptive cut)

	waits    atomic.Uint64
	waitTime atomic.Int64
	pauses   atomic.Uint64
}

// NewBucket returns a full bucket made from cfg, or an error naming the
// first invalid field.
func NewBucket(cfg BucketConfig) (*Bucket, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	b := &Bucket{
		clk:     timing.From(cfg.Clock),
		cfg:     cfg,
		changed: make(chan struct{}),
		rate:    cfg.Rate,
	}
	_, b.real = b.clk.(timing.Real)
	b.lim.Store(rate.NewLimiter(limitOf(cfg.Rate), cfg.Burst))
	b.next.Store(math.MaxInt64)
	return b, nil
}

func limitOf(r float64) rate.Limit {
	if math.IsInf(r, 1) {
		return rate.Inf
	}
	return rate.Limit(r)
}

// Stats is a snapshot of a Bucket's counters.
//
// In JSON the names are as the tags say, Rate is null when unlimited
// (math.Inf(1), which a JSON number cannot hold), WaitTime is in seconds,
// and PausedUntil is in RFC 3339 in UTC, left out when zero:
//
//	{"waits":4,"pauses":1,"rate":3,"wait_time_seconds":1.5,"paused_until":"2025-03-01T12:00:05Z"}
type Stats struct {
	// Waits is how many Wait/WaitN calls could not pass at once (whatever
	// their result, including ErrWouldExceedDeadline).
	Waits uint64 `json:"waits"`
	// WaitTime is the total time those calls slept.
	WaitTime time.Duration `json:"wait_time_seconds"`
	// Pauses is how many pauses began or moved a pause's end later.
	Pauses uint64 `json:"pauses"`
	// Rate is the current rate in events per second: the configured rate,
	// or less after an adaptive cut.
	Rate float64 `json:"rate"`
	// PausedUntil is the end of the latest pause (zero if none); it is in
	// the past when no pause is in effect.
	PausedUntil time.Time `json:"paused_until,omitzero"`
}

// Stats returns the bucket's counters and current rate.
func (b *Bucket) Stats() Stats {
	b.recover(b.clk.Now())
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{
		Waits:       b.waits.Load(),
		WaitTime:    time.Duration(b.waitTime.Load()),
		Pauses:      b.pauses.Load(),
		Rate:        b.rate,
		PausedUntil: b.pauseEnd,
	}
}

// Allow is shorthand for AllowN(now, 1) with now from the bucket's clock.
func (b *Bucket) Allow() bool {
	now := b.now()
	return b.allowAt(now, now.UnixNano(), 1)
}

// AllowN reports whether n events may happen at t, and if so takes their
// tokens. It is false during a pause. Use it to drop or skip events; use
// Wait to delay them.
func (b *Bucket) AllowN(t time.Time, n int) bool { return b.allowAt(t, unixNanos(t), n) }

// allowAt is AllowN with t's Unix nanoseconds already known.
func (b *Bucket) allowAt(t time.Time, tn int64, n int) bool {
	if tn >= b.next.Load() {
		b.recover(t)
	}
	if tn < b.pause.Load() {
		return false
	}
	return b.lim.Load().AllowN(t, n)
}

// now reads the bucket's clock, calling time.Now directly for the real one
// (the hot paths are within a few nanoseconds of x/time/rate's).
func (b *Bucket) now() time.Time {
	if b.real {
		return time.Now()
	}
	return b.clk.Now()
}

// TokensAt returns the number of tokens available at t; 0 while paused.
func (b *Bucket) TokensAt(t time.Time) float64 {
	if b.pausedAt(t) {
		return 0
	}
	return b.lim.Load().TokensAt(t)
}

// ReadyAt returns the earliest time, not before t, at which n events could
// happen if no one else took tokens meanwhile: after any pause, once the
// bucket holds n tokens. It takes nothing. ok is false if n exceeds the
// burst, so the events could never happen at once.
func (b *Bucket) ReadyAt(t time.Time, n int) (at time.Time, ok bool) {
	if n > b.cfg.Burst && !math.IsInf(b.cfg.Rate, 1) {
		return time.Time{}, false
	}
	if end := b.pause.Load(); unixNanos(t) < end {
		t = time.Unix(0, end)
	}
	lim := b.lim.Load()
	if lim.Limit() == rate.Inf {
		return t, true
	}
	missing := float64(n) - lim.TokensAt(t)
	if missing <= 0 {
		return t, true
	}
	return t.Add(time.Duration(math.Ceil(missing / float64(lim.Limit()) * 1e9))), true
}

// Wait is shorthand for WaitN(ctx, 1).
func (b *Bucket) Wait(ctx context.Context) error { return b.WaitN(ctx, 1) }

// WaitN blocks until n events may happen: until n tokens are available and
// no pause is in effect. It returns an error at once if n exceeds the burst
// or if the events could not happen before ctx's deadline, and ctx.Err() if
// ctx ends while waiting; in both cases the reserved tokens are given back.
func (b *Bucket) WaitN(ctx context.Context, n int) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	now := b.now()
	nn := now.UnixNano()
	if nn >= b.next.Load() {
		b.recover(now)
	}
	if nn < b.pause.Load() {
		if n > b.cfg.Burst && !math.IsInf(b.cfg.Rate, 1) {
			return b.burstError(n) // at once, not after the pause
		}
		_, _, _, err := b.sleep(ctx, now, n, nil, nil, time.Time{})
		return err
	}
	lim := b.lim.Load()
	r := lim.ReserveN(now, n)
	if !r.OK() {
		return b.burstError(n)
	}
	d := r.DelayFrom(now)
	if d == 0 {
		return nil
	}
	_, _, _, err := b.sleep(ctx, now, n, lim, r, now.Add(d))
	return err
}

func (b *Bucket) burstError(n int) error {
	return fmt.Errorf("ratelimit: Wait(n=%d) exceeds the bucket's burst %d", n, b.cfg.Burst)
}

// pausedAt reports whether a pause holds events at t.
func (b *Bucket) pausedAt(t time.Time) bool {
	return unixNanos(t) < b.pause.Load()
}

// sleep is the slow path of WaitN. r is the reservation taken on lim, due at
// due, or nil when none is held. It loops until r is due on the current
// limiter with no pause in effect; a pause replaces the limiter and closes
// b.changed, which voids r and makes every sleeper wait for the pause's end
// and reserve again. It returns the reservation that finally passed and the
// time it became due.
func (b *Bucket) sleep(ctx context.Context, start time.Time, n int, lim *rate.Limiter, r *rate.Reservation, due time.Time) (*rate.Limiter, *rate.Reservation, time.Time, error) {
	b.waits.Add(1)
	defer func() { b.waitTime.Add(int64(b.clk.Now().Sub(start))) }()
	deadline, hasDeadline := ctx.Deadline()
	var timer timing.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	now := start
	for {
		b.mu.Lock()
		changed, end, cur := b.changed, b.pauseEnd, b.lim.Load()
		b.mu.Unlock()
		if lim != cur {
			r = nil // a pause replaced the limiter: that token is void
		}
		var at time.Time
		switch {
		case now.Before(end):
			at = end
		case r == nil:
			lim, r = cur, cur.ReserveN(now, n)
			if !r.OK() {
				return nil, nil, time.Time{}, b.burstError(n)
			}
			at = now.Add(r.DelayFrom(now))
			due = at
		default:
			at = now.Add(r.DelayFrom(now))
		}
		if r != nil && !at.After(now) {
			return lim, r, due, nil
		}
		if hasDeadline && at.After(deadline) {
			if r != nil {
				r.CancelAt(now)
			}
			return nil, nil, time.Time{}, ErrWouldExceedDeadline
		}
		if timer == nil {
			timer = b.clk.NewTimer(at.Sub(now))
		} else {
			timer.Reset(at.Sub(now))
		}
		select {
		case <-timer.C():
		case <-changed:
			timer.Stop()
		case <-ctx.Done():
			if r != nil {
				r.CancelAt(b.clk.Now())
			}
			return nil, nil, time.Time{}, ctx.Err()
		}
		now = b.clk.Now()
		b.recover(now)
	}
}

// PauseFor is shorthand for PauseUntil(now.Add(d)) with now from the
// bucket's clock.
func (b *Bucket) PauseFor(d time.Duration) {
	if d > 0 {
		b.PauseUntil(b.clk.Now().Add(d))
	}
}

// PauseUntil holds every current and future event until t. A t not later
// than the current pause's end (or than now) does nothing: a pause is only
// ever extended. The pause empties the bucket, and in adaptive mode a pause
// that begins while no other is in effect cuts the rate.
func (b *Bucket) PauseUntil(t time.Time) {
	now := b.clk.Now()
	if t.After(maxTime) {
		t = maxTime
	}
	b.recover(now) // cut the rate recovered so far, not a stale one
	b.mu.Lock()
	defer b.mu.Unlock()
	if !t.After(now) || !t.After(b.pauseEnd) {
		return
	}
	if b.cfg.Adaptive {
		if !now.Before(b.pauseEnd) { // a new pause, not an extension
			b.rate = max(b.rate*b.cfg.Decrease, b.cfg.MinRate)
		}
		b.next.Store(addNanos(t.UnixNano(), int64(b.cfg.RecoverEvery)))
	}
	lim := rate.NewLimiter(limitOf(b.rate), b.cfg.Burst)
	lim.ReserveN(now, b.cfg.Burst) // empty at now; refills from here
	b.lim.Store(lim)
	b.pauseEnd = t
	b.pause.Store(t.UnixNano())
	close(b.changed)
	b.changed = make(chan struct{})
	b.pauses.Add(1)
}

// recover applies the adaptive recovery steps due at t.
func (b *Bucket) recover(t time.Time) {
	tn := unixNanos(t)
	if tn < b.next.Load() {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	next := b.next.Load()
	if tn < next {
		return
	}
	every := int64(b.cfg.RecoverEvery)
	steps := 1 + (tn-next)/every
	b.rate = min(b.cfg.Rate, b.rate+float64(steps)*b.cfg.RecoverStep)
	b.lim.Load().SetLimitAt(t, limitOf(b.rate))
	if b.rate >= b.cfg.Rate {
		b.next.Store(math.MaxInt64)
	} else {
		b.next.Store(addNanos(next, steps*every))
	}
}

func (b *Bucket) reserveOne() (ticket, error) {
	now := b.clk.Now()
	b.recover(now)
	if b.pausedAt(now) {
		return ticket{delay: time.Duration(b.pause.Load() - now.UnixNano())}, nil
	}
	lim := b.lim.Load()
	r := lim.ReserveN(now, 1)
	if !r.OK() {
		return ticket{}, b.burstError(1)
	}
	d := r.DelayFrom(now)
	return ticket{delay: d, held: true, lim: lim, r: r, at: now.Add(d)}, nil
}

func (b *Bucket) awaitOne(ctx context.Context, t ticket) (ticket, error) {
	lim, r, due, err := b.sleep(ctx, b.clk.Now(), 1, t.lim, t.r, t.at)
	return ticket{held: err == nil, lim: lim, r: r, at: due}, err
}

// cancelOne gives t's token back. x/time/rate keeps a token cancelled after
// its reservation was due, so a due token is cancelled as of its due time:
// the clock has moved on since All reserved it, though nobody used it.
func (b *Bucket) cancelOne(t ticket) {
	if t.held && t.lim == b.lim.Load() {
		now := b.clk.Now()
		if t.at.Before(now) {
			now = t.at
		}
		t.r.CancelAt(now)
	}
}
