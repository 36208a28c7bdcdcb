package fifo

import (
	"context"
	"math"
	"math/big"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/timing"
)

const forever = time.Duration(math.MaxInt64)

// TestForeverDelayNeverComesDue checks that a delay of MaxInt64, which
// means "forever", is never due: the deadline saturates instead of wrapping
// round to the past.
func TestForeverDelayNeverComesDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		require.NoError(t, g.Put("retried", 1))
		require.NoError(t, g.Put("deferred", 2))
		g.Retry(mustLease(t, g), forever)
		g.Defer(mustLease(t, g), forever)
		q := NewQueue[string](QueueConfig{})
		defer q.ShutDown()
		q.AddAfter("later", forever)

		ctx, cancel := context.WithTimeout(context.Background(), 1000*time.Hour)
		defer cancel()
		_, err := g.Get(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "Groups: a forever delay came due")
		_, err = q.Get(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "Queue: a forever AddAfter came due")
		require.Equal(t, 2, g.Stats().Delayed)

		q.AddAfter("later", time.Second) // an earlier deadline still wins
		require.Equal(t, "later", mustGet(t, q))
	})
}

// TestForeverDelayMockClock is TestForeverDelayNeverComesDue on a mock
// clock, whose readings are its Unix nanoseconds.
func TestForeverDelayMockClock(t *testing.T) {
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC))
	g, err := NewGroups[string, int](GroupsConfig{Clock: mock})
	require.NoError(t, err)
	defer g.Close(nil)
	q := NewQueue[string](QueueConfig{Clock: mock})
	defer q.ShutDown()
	require.NoError(t, g.Put("a", 1))
	g.Retry(mustLease(t, g), forever)
	q.AddAfter("a", forever)
	mock.Add(1000 * time.Hour)
	require.Equal(t, 0, q.Len())
	require.Equal(t, 1, g.Stats().Delayed)
}

// FuzzDelayDeadline checks the delay arithmetic: a deadline d after now is
// now+d, or the latest (earliest) reading there is when that does not fit,
// and the time it converts back to for the timer loop is not before now for
// d >= 0, so a long delay can neither come due early nor spin the loop.
func FuzzDelayDeadline(f *testing.F) {
	for _, now := range []int64{0, 1, time.Now().UnixNano(), math.MaxInt64 / 2, math.MaxInt64} {
		for _, d := range []int64{0, 1, -1, int64(time.Hour), math.MaxInt64, math.MinInt64} {
			f.Add(now, d)
		}
	}
	lo, hi := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	clamped := func(a, d int64) int64 {
		x := new(big.Int).Add(big.NewInt(a), big.NewInt(d))
		if x.Cmp(hi) > 0 {
			return math.MaxInt64
		}
		if x.Cmp(lo) < 0 {
			return math.MinInt64
		}
		return x.Int64()
	}
	f.Fuzz(func(t *testing.T, now, d int64) {
		if now < 0 {
			now = -(now + 1) // a mock clock reads from 1970 on
		}
		for _, clk := range []timing.Clock{fixedClock{time.Unix(0, now)}, timing.Real{}} {
			dl := newDelayer[int](clk)
			before := dl.ns.Now()
			at := dl.deadline(time.Duration(d))
			after := dl.ns.Now()
			if want, wantMax := clamped(before, d), clamped(after, d); at < want || at > wantMax {
				t.Fatalf("deadline(%d) = %d, want now+d in [%d, %d]", d, at, want, wantMax)
			}
			if d <= 0 {
				continue // never pushed: a delay <= 0 is due at once
			}
			if wait := dl.ns.Time(at).Sub(clk.Now()); wait < 0 && at-after > int64(time.Second) {
				t.Fatalf("deadline(%d) converts back to %v before now", d, -wait)
			}
			if got := dl.ns.Of(dl.ns.Time(at)); got != at {
				t.Fatalf("Of(Time(%d)) = %d", at, got)
			}
		}
	})
}

// fixedClock is a clock read as a mock one is, stopped at t.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time                      { return c.t }
func (c fixedClock) NewTimer(time.Duration) timing.Timer { panic("not used") }
