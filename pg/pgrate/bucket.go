package pgrate

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/ratelimit"
)

// detachedTimeout bounds the round trips made without the caller's ctx:
// PauseFor's, and the give-back of a Wait whose ctx ended.
const detachedTimeout = time.Second

// bucket is one shared bucket as seen from one Bucket or KeyLimiter
// value: its row in PostgreSQL, plus the pause set through this value,
// which holds this value's own waiters even before the server hears of
// it.
type bucket struct {
	srv   server
	s     *shape
	key   string   // the key of a Keyed's bucket, for errors
	sweep *sweeper // a Keyed's, which a call runs when due; nil for a Bucket

	pausedUntil atomic.Int64                // s.nanos reading; the latest pause set through this value
	pauseErr    atomic.Pointer[errorHolder] // PauseFor's last outcome
}

type errorHolder struct{ err error }

// allow takes an event if one is there now; see Bucket.Allow.
func (b *bucket) allow(ctx context.Context) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if b.pausedUntil.Load() > b.s.nanos.Now() {
		return false, nil
	}
	t, err := b.srv.take(ctx, 0)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		return b.s.failOpen, b.fail("Allow", err)
	}
	b.sweepIfDue(ctx)
	return !t.refused, nil
}

// wait waits for an event; see Bucket.Wait.
func (b *bucket) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var tm timing.Timer
	defer func() {
		if tm != nil {
			tm.Stop()
		}
	}()
	for {
		// A pause set through this value holds its waiters before they
		// ask the server, so none reserves a turn the pause would waste.
		if until, now := b.pausedUntil.Load(), b.s.nanos.Now(); until > now {
			if dl, ok := ctx.Deadline(); ok && b.s.nanos.Of(dl) < until {
				return ratelimit.ErrWouldExceedDeadline
			}
			if !b.sleep(ctx, &tm, time.Duration(until-now)) {
				return ctx.Err()
			}
		}
		most := time.Duration(-1)
		if dl, ok := ctx.Deadline(); ok {
			left := dl.Sub(b.s.clk.Now())
			if left < 0 {
				return ratelimit.ErrWouldExceedDeadline
			}
			most = microsDown(left)
		}
		// First as Allow does, with the cheaper statement, which is all a
		// Wait whose token is there needs; a Wait that has to wait then
		// asks for its turn.
		t, err := b.srv.take(ctx, 0)
		if err == nil && t.refused && most != 0 {
			t, err = b.srv.take(ctx, most)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return b.fail("Wait", err)
		}
		if t.refused {
			return ratelimit.ErrWouldExceedDeadline
		}
		b.sweepIfDue(ctx)
		if t.delay > 0 && !b.sleep(ctx, &tm, t.delay) {
			b.giveBack(ctx, t.tat)
			return ctx.Err()
		}
		if b.pausedUntil.Load() <= b.s.nanos.Now() {
			return nil
		}
		// A pause was set through this value while this Wait slept: its
		// turn falls in the pause, which voided it. Wait for the pause's
		// end, then take a new turn.
	}
}

// sleep waits d on the local clock, on one timer reused across calls. It
// reports false if ctx ended first.
func (b *bucket) sleep(ctx context.Context, tm *timing.Timer, d time.Duration) bool {
	if *tm == nil {
		*tm = b.s.clk.NewTimer(d)
	} else {
		(*tm).Reset(d)
	}
	select {
	case <-(*tm).C():
		return true
	case <-ctx.Done():
		return false
	}
}

// giveBack gives back the turn that a Wait whose ctx ended had reserved,
// if no one took a turn after it and no pause is in effect
// (queries.release). It runs despite ctx, for at most detachedTimeout. If
// it fails, the turn is lost: the bucket then lets one event fewer
// through, never one more.
func (b *bucket) giveBack(ctx context.Context, tat time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), detachedTimeout)
	defer cancel()
	_ = b.srv.release(ctx, tat)
}

// sweepIfDue runs a Keyed's sweep if one is due, after the call's own
// statement, within ctx. Its error is dropped: the next one due tries
// again.
func (b *bucket) sweepIfDue(ctx context.Context) {
	if b.sweep != nil && b.sweep.due() {
		_, _ = b.sweep.run(ctx)
	}
}

// pause pauses the bucket for d; see Bucket.Pause.
func (b *bucket) pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	until := timing.AddNanos(b.s.nanos.Now(), d)
	for {
		old := b.pausedUntil.Load()
		if old >= until || b.pausedUntil.CompareAndSwap(old, until) {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.srv.pauseFor(ctx, microsUp(d)); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return b.fail("Pause", err)
	}
	return nil
}

// pauseFor is pause without a ctx; see Bucket.PauseFor.
func (b *bucket) pauseFor(d time.Duration) {
	if d <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), detachedTimeout)
	defer cancel()
	b.pauseErr.Store(&errorHolder{b.pause(ctx, d)})
}

// err returns the outcome of the last pauseFor.
func (b *bucket) err() error {
	if h := b.pauseErr.Load(); h != nil {
		return h.err
	}
	return nil
}

// fail wraps err, which op got from the server, with the package and the
// bucket.
func (b *bucket) fail(op string, err error) error {
	if b.s.keyed {
		return fmt.Errorf("pgrate: %s on %q, key %q: %w", op, b.s.name, b.key, err)
	}
	return fmt.Errorf("pgrate: %s on %q: %w", op, b.s.name, err)
}
