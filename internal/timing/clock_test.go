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
