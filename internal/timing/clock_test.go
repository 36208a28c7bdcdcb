package timing

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestMockTimerDropsStaleTick: like a time.Timer, a mock timer that fired
// unread has no stale tick after Reset or Stop. A stale tick would make a
// later tick block the mock clock, holding its lock, until it is read.
func TestMockTimerDropsStaleTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		tm := From(mock).NewTimer(time.Second)
		mock.Add(time.Second) // fires; nobody reads it
		tm.Reset(time.Second)
		require.Empty(t, tm.C(), "stale tick after Reset")

		mock.Add(time.Second) // must not block
		require.Equal(t, mock.Now(), <-tm.C())

		tm.Reset(time.Second)
		mock.Add(time.Second)
		tm.Stop()
		require.Empty(t, tm.C(), "stale tick after Stop")
	})
}

// onlyTimers is a Clock that is neither Real nor a clock.Clock adapted,
// for AfterFunc's own timer.
type onlyTimers struct{ Real }

// TestAfterFunc: on each kind of clock, f runs once d passed, and not if
// stop came first, which then reports that it stopped it.
func TestAfterFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mock := clock.NewMock()
		for name, c := range map[string]Clock{"real": Real{}, "mock": From(mock), "other": onlyTimers{}} {
			advance := func(d time.Duration) {
				if c == From(mock) {
					mock.Add(d)
				} else {
					time.Sleep(d)
				}
				synctest.Wait()
			}
			ran := make(chan struct{}, 2)
			stop := AfterFunc(c, time.Second, func() { ran <- struct{}{} })
			advance(999 * time.Millisecond)
			require.Empty(t, ran, name)
			advance(time.Millisecond)
			require.Len(t, ran, 1, name)
			require.False(t, stop(), name)

			stop = AfterFunc(c, time.Second, func() { ran <- struct{}{} })
			require.True(t, stop(), name)
			advance(2 * time.Second)
			require.Len(t, ran, 1, name)
		}
	})
}
