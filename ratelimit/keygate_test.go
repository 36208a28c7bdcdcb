package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
)

// TestKeyedTakeKey steps one key of 1 event per second, burst 2, through
// TakeKey, PeekKey and a pause, at fixed instants of a mock clock.
func TestKeyedTakeKey(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewMock()
	k := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 1, Burst: 2, Clock: clk})
	take := func(want time.Duration) {
		t.Helper()
		peek, err := k.PeekKey(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, want, peek, "peek")
		got, err := k.TakeKey(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, want, got, "take")
	}
	take(0)
	take(0)
	take(time.Second) // the burst is spent; nothing taken
	take(time.Second)
	clk.Add(400 * time.Millisecond)
	take(600 * time.Millisecond)
	clk.Add(600 * time.Millisecond)
	take(0)
	take(time.Second)

	// Another key is not touched by a's.
	w, err := k.TakeKey(ctx, "b")
	require.NoError(t, err)
	require.Zero(t, w)

	// A pause holds the key until its end, and empties the bucket.
	clk.Add(5 * time.Second) // full again
	require.NoError(t, k.PauseKeyFor(ctx, "a", 3*time.Second))
	take(3 * time.Second)
	clk.Add(3 * time.Second)
	take(0) // refilled from the pause's start: min(Burst, Rate·pause) = 2
	take(0)
	take(time.Second)
	require.NoError(t, k.PauseKeyFor(ctx, "a", 0))
	take(time.Second)

	// An ended ctx changes nothing.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = k.TakeKey(cctx, "c")
	require.ErrorIs(t, err, context.Canceled)
	_, err = k.PeekKey(cctx, "c")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, k.PauseKeyFor(cctx, "c", time.Second), context.Canceled)
	w, err = k.PeekKey(ctx, "c") // no bucket yet: ready now
	require.NoError(t, err)
	require.Zero(t, w)
}

// TestKeyedTakeKeyAgreesWithAllow checks that TakeKey says yes exactly
// when AllowAt would, and that its wait is when AllowAt first would.
func TestKeyedTakeKeyAgreesWithAllow(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewMock()
	gate := newKeyed[int](t, ratelimit.KeyedConfig{Rate: 3, Burst: 3, Clock: clk})
	allow := newKeyed[int](t, ratelimit.KeyedConfig{Rate: 3, Burst: 3, Clock: clk})
	steps := []time.Duration{0, 0, 0, 0, 100 * time.Millisecond, 250 * time.Millisecond, 0, time.Second, 0, 0, 0, 0, 10 * time.Millisecond}
	for i, step := range steps {
		clk.Add(step)
		w, err := gate.TakeKey(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, w == 0, allow.AllowAt(1, clk.Now(), 1), "step %d", i)
		if w > 0 {
			require.False(t, allow.AllowAt(1, clk.Now().Add(w-time.Nanosecond), 1), "step %d: allowed before the wait", i)
			// AllowAt at a later time takes a token: mirror it on the gate.
			require.True(t, allow.AllowAt(1, clk.Now().Add(w), 1), "step %d: not allowed after the wait", i)
			clk.Add(w)
			w, err = gate.TakeKey(ctx, 1)
			require.NoError(t, err)
			require.Zero(t, w, "step %d", i)
		}
	}
}
