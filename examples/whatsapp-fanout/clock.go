package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// shiftedClock is the real clock moved to another instant: Now reads as the
// instant it was started at plus the time that really passed, and timers
// run for real durations. The demo uses it to begin a few seconds before a
// delivery window closes, and to start again the next morning, without
// waiting through the night. Inside a testing/synctest bubble the real clock
// is the bubble's fake one, so the same clock serves the tests.
//
// Jump moves it; it must not be called while timers of the clock run.
type shiftedClock struct {
	clock.Clock
	offset atomic.Int64 // nanoseconds
}

// clockAt returns a clock that reads at now and then runs at real speed.
func clockAt(at time.Time) *shiftedClock {
	c := &shiftedClock{Clock: clock.New()}
	c.Jump(at)
	return c
}

// Jump makes the clock read at now.
func (c *shiftedClock) Jump(at time.Time) { c.offset.Store(int64(time.Until(at))) }

func (c *shiftedClock) shift() time.Duration            { return time.Duration(c.offset.Load()) }
func (c *shiftedClock) Now() time.Time                  { return time.Now().Add(c.shift()) }
func (c *shiftedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c *shiftedClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

func (c *shiftedClock) WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(parent, d.Add(-c.shift()))
}

// sleepCtx waits for d on clk, or until ctx ends.
func sleepCtx(ctx context.Context, clk clock.Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := clk.Timer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
