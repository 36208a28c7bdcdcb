package window

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/timing"
)

// Inside a synctest bubble time starts at 2000-01-01 00:00 UTC, a Saturday.

func TestContextCancelledAtClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustParse(t, "00:00-08:00 UTC")
		start := time.Now()
		ctx, cancel := s.Context(context.Background())
		defer cancel()
		deadline, ok := ctx.Deadline()
		require.True(t, ok)
		require.Equal(t, start.Add(8*time.Hour).UTC(), deadline.UTC())

		time.Sleep(8*time.Hour - time.Nanosecond)
		synctest.Wait()
		require.NoError(t, ctx.Err())

		time.Sleep(time.Nanosecond)
		synctest.Wait()
		require.ErrorIs(t, ctx.Err(), context.Canceled)
		require.ErrorIs(t, context.Cause(ctx), ErrOutside)
		require.EqualError(t, context.Cause(ctx), "window: outside the delivery window")

		// Children see the close too.
		child, cancelChild := context.WithCancel(ctx)
		defer cancelChild()
		require.ErrorIs(t, context.Cause(child), ErrOutside)
	})
}

func TestContextClosedNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustParse(t, "09:00-17:00 UTC")
		ctx, cancel := s.Context(context.Background())
		defer cancel()
		require.ErrorIs(t, ctx.Err(), context.Canceled)
		require.ErrorIs(t, context.Cause(ctx), ErrOutside)
		deadline, ok := ctx.Deadline()
		require.True(t, ok)
		require.Equal(t, utc(1999, 12, 31, 17, 0), deadline.UTC())
	})
}

func TestContextCancelBeforeClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustParse(t, "00:00-08:00 UTC")
		ctx, cancel := s.Context(context.Background())
		time.Sleep(time.Hour)
		cancel()
		cancel() // idempotent
		require.ErrorIs(t, context.Cause(ctx), context.Canceled)
		require.NotErrorIs(t, context.Cause(ctx), ErrOutside)
	})
}

func TestContextParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustParse(t, "00:00-08:00 UTC")
		stop := errors.New("stop")
		parent, cancelParent := context.WithCancelCause(context.Background())
		ctx, cancel := s.Context(parent)
		defer cancel()
		cancelParent(stop)
		synctest.Wait()
		require.ErrorIs(t, context.Cause(ctx), stop)

		// An earlier parent deadline wins, with the parent's cause.
		parent, cancelParent2 := context.WithTimeout(context.Background(), time.Hour)
		defer cancelParent2()
		ctx, cancel = s.Context(parent)
		defer cancel()
		deadline, _ := ctx.Deadline()
		require.Equal(t, time.Now().Add(time.Hour).UTC(), deadline.UTC())
		time.Sleep(time.Hour)
		synctest.Wait()
		require.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
		require.NotErrorIs(t, context.Cause(ctx), ErrOutside)
	})
}

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustParse(t, "Mon-Fri 09:00-17:00 Europe/Paris")
		// Saturday 00:00 UTC: next open is Monday 09:00 CET.
		require.NoError(t, s.Wait(context.Background()))
		require.Equal(t, utc(2000, 1, 3, 8, 0), time.Now().UTC())

		// Open now: at once.
		time.Sleep(time.Hour)
		require.NoError(t, s.Wait(context.Background()))
		require.Equal(t, utc(2000, 1, 3, 9, 0), time.Now().UTC())

		// Open, but the context already ended.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, s.Wait(ctx), context.Canceled)

		// Closed, and the context ends first.
		time.Sleep(8 * time.Hour) // 18:00 Paris
		ctx, cancel = context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		require.ErrorIs(t, s.Wait(ctx), context.DeadlineExceeded)
		require.Equal(t, utc(2000, 1, 3, 18, 0), time.Now().UTC())
	})
}

func TestWaitZeroSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 48*time.Hour)
		defer cancel()
		require.ErrorIs(t, Schedule{}.Wait(ctx), context.DeadlineExceeded)
		require.Equal(t, utc(2000, 1, 3, 0, 0), time.Now().UTC())
	})
}

func TestMockClock(t *testing.T) {
	mock := clock.NewMock()
	mock.Set(utc(2026, 11, 23, 7, 0)) // Monday
	s := mustParse(t, "Mon-Fri 09:00-17:00 UTC").WithClock(mock)

	waited := make(chan error)
	go func() { waited <- s.Wait(context.Background()) }()
	mock.Add(time.Hour)
	select {
	case err := <-waited:
		t.Fatalf("Wait returned %v before the open", err)
	default:
	}
	mock.Add(time.Hour)
	require.NoError(t, receive(t, waited))

	ctx, cancel := s.Context(context.Background())
	defer cancel()
	deadline, _ := ctx.Deadline()
	require.Equal(t, utc(2026, 11, 23, 17, 0), deadline.UTC())
	mock.Add(8*time.Hour - time.Second)
	require.NoError(t, ctx.Err())
	mock.Add(time.Second)
	receive(t, ctx.Done()) // closed by the context's goroutine once the mock timer fires
	require.ErrorIs(t, context.Cause(ctx), ErrOutside)
}

// receive returns the next value from c; the wall-clock bound only turns a
// hang into a failure.
func receive[T any](t *testing.T, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(time.Minute):
		t.Fatal("nothing received within a minute")
		panic("unreachable")
	}
}

// TestConcurrentUse shares one Schedule between goroutines under -race.
func TestConcurrentUse(t *testing.T) {
	s := mustParse(t, "Mon-Fri 22:00-06:00 America/New_York")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			at := utc(2026, 3, 1, g, 0)
			for range 500 {
				_ = s.Contains(at)
				_ = s.NextOpen(at)
				_ = s.EndAt(at)
				at = at.Add(37 * time.Minute)
			}
			ctx, cancel := s.Context(context.Background())
			cancel()
			<-ctx.Done()
		})
	}
	wg.Wait()
}

// movingClock is a mock clock that another goroutine moves by step just
// before each of the next moves timers is made.
type movingClock struct {
	mock  *clock.Mock
	step  time.Duration
	moves int
}

func (c *movingClock) Now() time.Time { return c.mock.Now() }

func (c *movingClock) NewTimer(d time.Duration) timing.Timer {
	if c.moves > 0 {
		c.moves--
		c.mock.Add(c.step)
	}
	return timing.From(c.mock).NewTimer(d)
}

// TestTimerAtMovedClock: a timer for 09:00 read at 07:00 still fires at
// 09:00 when the clock moves to 07:30 while the timer is being made.
func TestTimerAtMovedClock(t *testing.T) {
	mock := clock.NewMock()
	mock.Set(utc(2026, 11, 23, 7, 0))
	clk := &movingClock{mock: mock, step: 30 * time.Minute, moves: 1}
	timer := newTimerAt(clk, clk.Now(), utc(2026, 11, 23, 9, 0))
	defer timer.Stop()
	mock.Add(90*time.Minute - time.Second)
	select {
	case <-timer.C():
		t.Fatal("fired before 09:00")
	default:
	}
	mock.Add(time.Second)
	select {
	case at := <-timer.C():
		require.Equal(t, utc(2026, 11, 23, 9, 0), at.UTC())
	default:
		t.Fatal("not fired at 09:00")
	}
}

// shiftedClock is the real clock read with an offset, as a program that
// replays another time of day would use: never a mock, never still.
type shiftedClock struct {
	clock.Clock
	offset time.Duration
}

func (c shiftedClock) Now() time.Time { return time.Now().Add(c.offset) }

// TestContextOnRealSpeedClock: a clock that is not the real one but runs at
// real speed (so it moves between any two readings) still gets its close
// timer. It runs on the real clock on purpose: inside a bubble time stands
// still between readings.
func TestContextOnRealSpeedClock(t *testing.T) {
	// Read the real clock as 07:00 UTC today, an hour before the close.
	now := time.Now().UTC()
	seven := time.Date(now.Year(), now.Month(), now.Day(), 7, 0, 0, 0, time.UTC)
	clk := shiftedClock{Clock: clock.New(), offset: seven.Sub(now)}
	s := mustParse(t, "06:00-08:00 UTC").WithClock(clk)
	ctx, cancel := s.Context(context.Background())
	defer cancel()
	deadline, ok := ctx.Deadline()
	require.True(t, ok)
	require.Equal(t, seven.Add(time.Hour), deadline.UTC())
	require.NoError(t, ctx.Err())
}
