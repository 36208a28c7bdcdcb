package sched

import (
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/pacerkit/pacer/internal/timing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLoopFiresAtDeadlines drives a heap through the loop on fake time and
// checks each key runs at its deadline, including one pushed earlier than
// the deadline the loop was already sleeping towards.
func TestLoopFiresAtDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		var h Heap[string]
		fired := map[string]time.Duration{}
		loop := Start(timing.Real{}, func(now time.Time) (time.Time, bool) {
			mu.Lock()
			defer mu.Unlock()
			for {
				key, at, ok := h.Peek()
				if !ok {
					return time.Time{}, false
				}
				if at > now.UnixNano() {
					return time.Unix(0, at), true
				}
				h.Pop()
				fired[key] = now.Sub(start)
			}
		})
		defer loop.Stop()

		push := func(key string, d time.Duration) {
			mu.Lock()
			earliest := h.Push(key, start.Add(d).UnixNano())
			mu.Unlock()
			if earliest {
				loop.Wake()
			}
		}
		push("late", 10*time.Second)
		synctest.Wait()
		push("early", 3*time.Second)
		time.Sleep(20 * time.Second)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, map[string]time.Duration{"early": 3 * time.Second, "late": 10 * time.Second}, fired)
	})
}

func TestLoopStopIsIdempotent(t *testing.T) {
	loop := Start(timing.Real{}, func(time.Time) (time.Time, bool) { return time.Time{}, false })
	loop.Stop()
	loop.Stop()
}

// TestLoopRunsAgainWhenAlreadyDue: when run returns a deadline that has
// already passed, the loop calls it again at once, also on a mock clock,
// whose timers fire only when the clock moves.
func TestLoopRunsAgainWhenAlreadyDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		var mu sync.Mutex
		calls := 0
		loop := Start(timing.From(mock), func(now time.Time) (time.Time, bool) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls < 3 {
				return now, true // more is due at once
			}
			return time.Time{}, false
		})
		defer loop.Stop()
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, 3, calls)
	})
}

// TestLoopLatestDeadlineSleeps checks that the loop sleeps through the
// latest deadline there is, the saturated one of a delay meaning "forever",
// instead of taking it for one in the past.
func TestLoopLatestDeadlineSleeps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ns := timing.NewNanos(timing.Real{})
		var mu sync.Mutex
		calls := 0
		loop := Start(timing.Real{}, func(now time.Time) (time.Time, bool) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			return ns.Time(math.MaxInt64), true
		})
		defer loop.Stop()
		time.Sleep(1000 * time.Hour)
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, 1, calls)
	})
}
