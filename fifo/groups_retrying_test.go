package fifo

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// Behind counts a key's messages behind its head, leased, retried or not;
// the Stats count the keys waiting for a retry and the messages behind them.
func TestGroupsBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		require.NoError(t, g.Put("a", 1, 2, 3))
		require.NoError(t, g.Put("b", 4))
		la := mustLease(t, g)
		require.Equal(t, 2, g.Behind("a"))
		require.NoError(t, g.Put("a", 5))
		require.Equal(t, 3, g.Behind("a"))
		g.Retry(la, time.Second)
		require.Equal(t, 3, g.Behind("a"), "behind the retried batch")
		s := g.Stats()
		require.Equal(t, 1, s.Retrying)
		require.Equal(t, 3, s.BehindRetrying)

		lb := mustLease(t, g)
		g.Defer(lb, time.Second) // delayed, but not failed
		s = g.Stats()
		require.Equal(t, 1, s.Retrying, "a Defer is not a failure")
		require.Equal(t, 3, s.BehindRetrying)
		require.Zero(t, g.Behind("b"))
		require.Zero(t, g.Behind("none"))

		time.Sleep(time.Second)
		synctest.Wait() // the timer goroutine made them ready
		s = g.Stats()
		require.Zero(t, s.Retrying, "due: ready, no longer waiting")
		require.Zero(t, s.BehindRetrying)
		require.Equal(t, 3, g.Behind("a"), "the retried batch is still the head")
	})
}
