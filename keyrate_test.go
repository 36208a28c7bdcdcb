package pacer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// One slow key and 50 others share 2 workers under a KeyRate of one batch
// a minute per key. The slow key's batches run a minute apart and no
// worker waits for its token: the other keys, added one a second, each
// start as soon as they are added. With a Store the store defers the key
// in its claims; in the process the Runner does, and counts it.
func TestKeyRateSlowKeyHoldsNoWorker(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		cfg := on(pacer.Config[string, int]{Workers: 2, MaxBatch: 1, KeyRate: store.KeyRate{Interval: time.Minute}})
		r, _ := runSlowKey(t, cfg)
		if cfg.Store == nil {
			require.Equal(t, uint64(2), stats(t, r).KeyLimited, "one deferral per token")
		} else {
			require.Zero(t, stats(t, r).KeyLimited, "the store defers, not the Runner")
		}
	})
}

// A key waiting for its KeyRate token says so in Explain, with when the
// token comes, on both paths; a burst of 2 lets two batches run at once.
func TestKeyRateExplain(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		rc := newRecorder(func(context.Context, string, []int) error { return nil })
		r := newRunner(t, on(pacer.Config[string, int]{Workers: 1, MaxBatch: 1, KeyRate: store.KeyRate{Interval: time.Hour, Burst: 2}}), rc)
		for i := range 3 {
			require.NoError(t, r.Add(t.Context(), "k", i))
		}
		stop := start(t, r)
		time.Sleep(time.Minute)
		require.Len(t, rc.Calls(), 2, "the burst's two batches")
		x, err := r.Explain(t.Context(), "k")
		require.NoError(t, err)
		require.Equal(t, x.At.Add(59*time.Minute), x.KeyTokenAt, "%s", x)
		require.Contains(t, x.String(), "waiting for its key's token until")
		time.Sleep(time.Hour)
		require.Len(t, rc.Calls(), 3)
		require.Equal(t, time.Hour, rc.Calls()[2].At)
		stop()
	})
}

// TestKeyRateRefused: New refuses a KeyRate that no engine keeps, and a
// Store that keeps none, naming the field.
func TestKeyRateRefused(t *testing.T) {
	h := func(context.Context, string, []int) error { return nil }
	for _, cfg := range []pacer.Config[string, int]{
		{KeyRate: store.KeyRate{Interval: -time.Second}},
		{KeyRate: store.KeyRate{Interval: time.Second, Burst: -1}},
		{KeyRate: store.KeyRate{Interval: time.Nanosecond}},
		{KeyRate: store.KeyRate{Interval: time.Hour, Burst: 25}},
		{KeyRate: store.KeyRate{Interval: time.Second}, Store: noKeyRate{store.NewMemory(store.MemoryConfig{})}, Name: "q"},
	} {
		_, err := pacer.New(cfg, h)
		require.ErrorContains(t, err, "pacer: Config.KeyRate", "%+v", cfg.KeyRate)
	}
	r, err := pacer.New(pacer.Config[string, int]{Store: noKeyRate{store.NewMemory(store.MemoryConfig{})}, Name: "q"}, h)
	require.NoError(t, err, "no KeyRate needs no KeyRateClaimer")
	require.NoError(t, r.Shutdown(context.Background()))
}

// noKeyRate is a Store that does not implement store.KeyRateClaimer.
type noKeyRate struct{ store.Store }
