package pgrate_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgrate"
)

// TestAllowKeysTakesEachInOrder: one flight of Allows of several keys
// takes each one's event as Allow would, in the order they came, a key
// that comes more than once included, and leaves a paused key alone.
func TestAllowKeysTakesEachInOrder(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	ctx := context.Background()
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 0.1, Burst: 2, Name: "flights", Schema: freshSchema(t, pool), SweepEvery: -1})
	ok, err := k.Allow(ctx, "b") // b has one event left
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, k.PauseKey(ctx, "p", time.Minute))

	got, err := pgrate.AllowKeys(ctx, k, "a", "b", "a", "p", "b", "a", "c")
	require.NoError(t, err)
	require.Equal(t, []bool{true, true, true, false, false, false, true}, got)

	got, err = pgrate.AllowKeys(ctx, k, "c", "a", "c", "d")
	require.NoError(t, err)
	require.Equal(t, []bool{true, false, false, true}, got)
}

// TestKeyedAllowsAtOnceKeepEachBurst: many Allows of a few keys at once,
// which share flights, let through exactly each key's Burst when no
// token comes back meanwhile.
func TestKeyedAllowsAtOnceKeepEachBurst(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	ctx := context.Background()
	const keys, burst, callers = 5, 4, 40
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 0.01, Burst: burst, Name: "flights", Schema: freshSchema(t, pool), SweepEvery: -1})
	var taken [keys]atomic.Int64
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			for range 3 {
				ok, err := k.Allow(ctx, "key-"+strconv.Itoa(i%keys))
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					taken[i%keys].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for i := range taken {
		require.EqualValues(t, burst, taken[i].Load(), "key-%d", i)
	}
}
