package fifo

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// Retrying counts the keys whose head was retried and waits for its delay,
// and the messages behind those heads; Behind counts a key's messages
// behind its head, leased or not.
func TestGroupsRetrying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		require.NoError(t, g.Put("a", 1, 2, 3))
		require.NoError(t, g.Put("b", 4))
		la := mustLease(t, g)
		require.Equal(t, 2, g.Behind("a"))
		require.NoError(t, g.Put("a", 5))
		require.Equal(t, 3, g.Behind("a"))
		g.Retry(la, time.Second)
		keys, behind := g.Retrying()
		require.Equal(t, 1, keys)
		require.Equal(t, 3, behind)

		lb := mustLease(t, g)
		g.Defer(lb, time.Second) // delayed, but not failed
		keys, behind = g.Retrying()
		require.Equal(t, 1, keys)
		require.Equal(t, 3, behind)
		require.Zero(t, g.Behind("b"))
		require.Zero(t, g.Behind("none"))

		time.Sleep(time.Second)
		synctest.Wait() // the timer goroutine made them ready
		keys, behind = g.Retrying()
		require.Zero(t, keys, "due: ready, no longer waiting")
		require.Zero(t, behind)
	})
}
