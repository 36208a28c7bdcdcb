package fifo

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// Key follows a key through every state, and counts the ready keys ahead
// of it up to the bound.
func TestGroupsKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		t0 := time.Now()
		_, ok := g.Key("a", 10)
		require.False(t, ok)

		require.NoError(t, g.Put("a", 1, 2))
		require.NoError(t, g.Put("b", 3))
		require.NoError(t, g.Put("c", 4))
		info, ok := g.Key("c", 10)
		require.True(t, ok)
		require.Equal(t, KeyInfo{State: KeyReady, Messages: 1, Attempt: 1, Ahead: 2}, info)
		info, _ = g.Key("c", 1)
		require.Equal(t, 1, info.Ahead, "counted up to the bound")
		info, _ = g.Key("a", 10)
		require.Equal(t, 0, info.Ahead)

		la := mustLease(t, g)
		info, _ = g.Key("a", 10)
		require.Equal(t, KeyInfo{State: KeyLeased, Messages: 2, Attempt: 1, Leases: 1}, info)
		info, _ = g.Key("c", 10)
		require.Equal(t, 1, info.Ahead, "b is ahead")

		g.Retry(la, time.Second)
		info, _ = g.Key("a", 10)
		require.Equal(t, KeyInfo{State: KeyRetrying, Messages: 2, Attempt: 2, Due: t0.Add(time.Second)}, info)

		lb := mustLease(t, g)
		g.Defer(lb, 2*time.Second)
		info, _ = g.Key("b", 10)
		require.Equal(t, KeyInfo{State: KeyDeferred, Messages: 1, Attempt: 1, Due: t0.Add(2 * time.Second)}, info)

		lc := mustLease(t, g)
		g.Hold(lc)
		info, _ = g.Key("c", 10)
		require.Equal(t, KeyInfo{State: KeyHeld, Messages: 1, Attempt: 1}, info)

		time.Sleep(time.Second)
		synctest.Wait()
		info, _ = g.Key("a", 10)
		require.Equal(t, KeyInfo{State: KeyReady, Messages: 2, Attempt: 2}, info, "due: ready again")

		require.True(t, g.Release("c"))
		info, _ = g.Key("c", 10)
		require.Equal(t, KeyInfo{State: KeyReady, Messages: 1, Attempt: 1, Ahead: 1}, info)

		require.True(t, g.Ack(mustLease(t, g)) /* a: 1 of 2 */)
		require.False(t, g.Ack(mustLease(t, g)) /* c */)
		info, _ = g.Key("a", 10)
		require.Equal(t, KeyInfo{State: KeyReady, Messages: 1, Attempt: 1}, info)
		require.False(t, g.Ack(mustLease(t, g)))
		_, ok = g.Key("a", 10)
		require.False(t, ok, "no messages left")
	})
}
