package window

import (
	"context"
	"errors"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
)

// ErrOutside is the cause of a context from Schedule.Context ending because
// the window closed (or was closed when Context was called): the work is
// outside the window. It is not a failure of the work, nor a shutdown: a
// pacer.Runner's handler tells the two apart by cause, ErrOutside or
// pacer.ErrClosed.
var ErrOutside = errors.New("window: outside the delivery window")

func (s Schedule) clock() timing.Clock {
	if s.clk == nil {
		return timing.Real{}
	}
	return s.clk
}

// Context returns a copy of parent that is cancelled when the current span
// of s closes, with cause ErrOutside: context.Cause(ctx) == ErrOutside and
// ctx.Err() == context.Canceled. If s is closed now, ctx is already
// cancelled with cause ErrOutside when Context returns. "Now" and the wait
// until the close follow the Schedule's clock (see WithClock), and
// ctx.Deadline reports the close on that clock (or parent's deadline, if
// earlier).
//
// The window closes at EndAt(now): spans that touch, as in "Sat-Sun
// 00:00-24:00", count as one, so work running across Saturday midnight goes
// on. As with context.WithCancel, call cancel as soon as the work is
// done: it releases the timer and the goroutine waiting for the close, and
// returns once that goroutine has exited.
func (s Schedule) Context(parent context.Context) (ctx context.Context, cancel context.CancelFunc) {
	clk := s.clock()
	now := clk.Now()
	end := s.EndAt(now)
	inner, cancelCause := context.WithCancelCause(parent)
	deadline := end
	if d, ok := parent.Deadline(); ok && d.Before(end) {
		deadline = d
	}
	ctx = deadlineCtx{inner, deadline}
	if !end.After(now) {
		cancelCause(ErrOutside)
		return ctx, func() { cancelCause(context.Canceled) }
	}
	// The timer starts here, not in the goroutine, so a mock clock moved
	// right after Context returns cannot outrun it.
	timer := newTimerAt(clk, now, end)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer timer.Stop()
		select {
		case <-timer.C():
			cancelCause(ErrOutside)
		case <-inner.Done():
		}
	}()
	return ctx, func() {
		cancelCause(context.Canceled)
		<-done
	}
}

// deadlineCtx reports the window's close as its deadline. Everything else,
// including Cause and the propagation to children, is the inner context's.
type deadlineCtx struct {
	context.Context
	deadline time.Time
}

func (c deadlineCtx) Deadline() (time.Time, bool) { return c.deadline, true }

// Wait blocks until s is open and returns nil, at once if s contains the
// current time of its clock. If ctx ends first, or had already ended, Wait
// returns ctx.Err(). For the zero Schedule it waits for ctx.
func (s Schedule) Wait(ctx context.Context) error {
	clk := s.clock()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := clk.Now()
		if s.Contains(now) {
			return nil
		}
		next := s.NextOpen(now)
		if next.IsZero() {
			<-ctx.Done()
			return ctx.Err()
		}
		// Re-check after the timer: a moved mock clock may have jumped
		// past the whole span.
		timer := newTimerAt(clk, now, next)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-timer.C():
		}
	}
}

// newTimerAt starts a timer of clk that fires at at, given now, a reading of
// clk. Another goroutine moving a mock clock between that reading and the
// start would make the timer late by the move, so for clocks other than the
// real one the reading is checked after the start, and the timer restarted
// if the clock moved by more than timerSlack. A clock that runs at real
// speed (a wrapped or shifted real clock) always moves a little, which the
// slack absorbs.
func newTimerAt(clk timing.Clock, now, at time.Time) timing.Timer {
	for {
		timer := clk.NewTimer(at.Sub(now))
		if _, real := clk.(timing.Real); real {
			return timer
		}
		later := clk.Now()
		if moved := later.Sub(now); moved > -timerSlack && moved < timerSlack {
			return timer
		}
		timer.Stop()
		now = later
	}
}

// timerSlack is how far a clock may move while a timer starts before the
// timer is restarted.
const timerSlack = time.Millisecond
