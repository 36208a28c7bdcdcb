package redisrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redisrate"
)

// TestKeyedTakeKey: TakeKey takes a key's token when its shared bucket
// has one and otherwise tells the wait without taking; PeekKey only
// tells; both see another instance's takes and pauses of the key.
func TestKeyedTakeKey(t *testing.T) {
	t.Parallel()
	c1, c2 := client(t), client(t)
	p := prefix(t, c1)
	cfg := redisrate.KeyedConfig{Rate: 0.5, Burst: 2, Prefix: p} // a token every 2 s
	a, b := newKeyed(t, c1, cfg), newKeyed(t, c2, cfg)
	ctx := context.Background()

	w, err := a.PeekKey(ctx, "alice")
	require.NoError(t, err)
	require.Zero(t, w)
	for range 2 {
		w, err = a.TakeKey(ctx, "alice")
		require.NoError(t, err)
		require.Zero(t, w)
	}
	w, err = b.TakeKey(ctx, "alice") // the other instance sees the bucket empty
	require.NoError(t, err)
	require.Greater(t, w, time.Second)
	require.LessOrEqual(t, w, 2*time.Second)
	w2, err := b.PeekKey(ctx, "alice") // the refused take took nothing
	require.NoError(t, err)
	require.InDelta(t, float64(w), float64(w2), float64(100*time.Millisecond))
	require.Equal(t, 2, keyAllowN(t, b, "bob", 3), "bob paid for alice")

	require.NoError(t, a.PauseKeyFor(ctx, "carol", time.Minute))
	w, err = b.TakeKey(ctx, "carol")
	require.NoError(t, err)
	require.Greater(t, w, 59*time.Second, "carol's pause did not hold another instance")

	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = a.TakeKey(done, "dave")
	require.ErrorIs(t, err, context.Canceled)
}
