package storetest

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// testRunnerMaxValues runs two pacer Runners with Config.MaxValues on
// Harness.Store and its Twin, and checks that their Adds together stop at
// the bound, refused on either instance with ErrFull, which wraps
// store.ErrFull and counts in Stats.Refused; and that the values handled
// make room again.
func testRunnerMaxValues(f *fixture) {
	t, s1, s2 := f.t, f.s, f.twin
	ctx := t.Context()
	handled := make(chan int, 4)
	h := func(_ context.Context, _ string, batch []int) error {
		for _, v := range batch {
			handled <- v
		}
		return nil
	}
	cfg := pacer.Config[string, int]{Store: s1, Name: f.q, MaxValues: 3, MaxBatch: 1}
	r1, err := pacer.New(cfg, h)
	require.NoError(t, err)
	cfg.Store = s2
	r2, err := pacer.New(cfg, h)
	require.NoError(t, err)

	require.NoError(t, r1.Add(ctx, "a", 1))
	require.NoError(t, r2.Add(ctx, "a", 2))
	require.NoError(t, r1.Add(ctx, "b", 3))
	err = r2.Add(ctx, "c", 4)
	require.ErrorIs(t, err, pacer.ErrFull, "the queue holds 3, added by both instances")
	require.ErrorIs(t, err, store.ErrFull)
	require.ErrorIs(t, r1.Add(ctx, "a", 4), pacer.ErrFull)
	st, err := r1.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, st.Values)
	require.Equal(t, uint64(2), st.Received)
	require.Equal(t, uint64(1), st.Refused)

	StartRunner(t, r1)
	for range 3 {
		select {
		case <-handled:
		case <-time.After(10 * time.Second):
			t.Fatal("the values accepted were not handled")
		}
	}
	require.Eventually(t, func() bool { return r2.Add(ctx, "c", 4) == nil },
		10*time.Second, time.Millisecond, "room once the values were handled")
	select {
	case v := <-handled:
		require.Equal(t, 4, v)
	case <-time.After(10 * time.Second):
		t.Fatal("the value added once there was room was not handled")
	}
	require.NoError(t, r2.Shutdown(ctx))
}
