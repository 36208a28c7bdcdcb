package pacer_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/window"
)

func TestConfigValidation(t *testing.T) {
	type cfg = pacer.Config[string, int]
	for _, tc := range []struct {
		cfg cfg
		err string
	}{
		{cfg{Debounce: -1}, "pacer: Config.Debounce must be >= 0, got -1ns"},
		{cfg{MaxWait: time.Second}, "pacer: Config.MaxWait needs Config.Debounce > 0, got MaxWait 1s"},
		{cfg{Debounce: 2 * time.Second, MaxWait: time.Second}, "pacer: Config.MaxWait must be 0 or >= Config.Debounce (2s), got 1s"},
		{cfg{MaxBatch: -1}, "pacer: Config.MaxBatch must be >= 0, got -1"},
		{cfg{Workers: -2}, "pacer: Config.Workers must be >= 0, got -2"},
		{cfg{MaxValues: -1}, "pacer: Config.MaxValues must be >= 0, got -1"},
		{cfg{Exhausted: 7}, "pacer: Config.Exhausted must be ExhaustedDrop or ExhaustedHold, got 7"},
		{cfg{Retry: pacer.Backoff{Initial: -1}}, "pacer: Config.Retry.Initial must be >= 0, got -1ns"},
		{cfg{Retry: pacer.Backoff{Multiplier: 0.5}}, "pacer: Config.Retry.Multiplier must be >= 1, got 0.5"},
		{cfg{Retry: pacer.Backoff{Jitter: 2}}, "pacer: Config.Retry.Jitter must be in [0, 1], got 2"},
		{cfg{Retry: pacer.Backoff{Attempts: -2}}, "pacer: Config.Retry.Attempts must be >= 0 or Unlimited (-1), got -2"},
		{cfg{Adaptive: pacer.Adaptive{Max: time.Second}}, "pacer: Config.Adaptive needs Config.Debounce > 0, got 0s"},
		{cfg{Debounce: 2 * time.Second, Adaptive: pacer.Adaptive{Max: time.Second}}, "pacer: Config.Adaptive.Max must be >= Config.Debounce (2s), got 1s"},
		{cfg{Window: &window.Schedule{}}, "pacer: Config.Window must not be the zero Schedule, which never opens"},
		{cfg{LeaseTTL: time.Microsecond}, "pacer: Config.LeaseTTL must be 0 (30 s) or at least 100ms, got 1µs"},
		{cfg{LeaseTTL: 99 * time.Millisecond}, "pacer: Config.LeaseTTL must be 0 (30 s) or at least 100ms, got 99ms"},
		{cfg{Store: store.NewMemory(store.MemoryConfig{})}, "pacer: Config.Name must be set with Config.Store: it names the Runner's queue in the store"},
		{cfg{Store: store.NewMemory(store.MemoryConfig{}), Name: "q", DropPendingOnShutdown: true},
			"pacer: Config.DropPendingOnShutdown does not apply with Config.Store: bursts debounce in the store, and Shutdown leaves them there"},
		{cfg{Name: "q"}, "pacer: Config.Name applies only with Config.Store, which is nil"},
		{cfg{Codec: pacer.JSON[int]{}}, "pacer: Config.Codec applies only with Config.Store, which is nil"},
		{cfg{KeyCodec: pacer.JSON[string]{}}, "pacer: Config.KeyCodec applies only with Config.Store, which is nil"},
		{cfg{LeaseTTL: time.Second}, "pacer: Config.LeaseTTL applies only with Config.Store, which is nil"},
		{cfg{AckInBackground: true}, "pacer: Config.AckInBackground applies only with Config.Store, which is nil"},
		{cfg{DropPendingOnShutdown: true}, "pacer: Config.DropPendingOnShutdown needs Config.Debounce > 0: without it no burst is pending at Shutdown"},
		{cfg{Store: struct{ store.Store }{store.NewMemory(store.MemoryConfig{})}, Name: "q", AckInBackground: true},
			"pacer: Config.AckInBackground needs a Config.Store that implements store.FinishClaimer, which struct { store.Store } does not"},
		{cfg{Exhausted: pacer.ExhaustedHold, Retry: pacer.Backoff{Attempts: pacer.Unlimited}},
			"pacer: Config.Exhausted does not apply with Config.Retry.Attempts Unlimited: no batch uses up its attempts"},
		{cfg{Adaptive: pacer.Adaptive{Backlog: 10}}, "pacer: Config.Adaptive.Backlog applies only with Config.Adaptive.Max, which is 0"},
		{cfg{Adaptive: pacer.Adaptive{HalfLife: time.Minute}}, "pacer: Config.Adaptive.HalfLife applies only with Config.Adaptive.Max, which is 0"},
	} {
		_, err := pacer.New(tc.cfg, func(context.Context, string, []int) error { return nil })
		require.EqualError(t, err, tc.err)
	}
	require.PanicsWithValue(t, "pacer: New with a nil Handler", func() { _, _ = pacer.New(cfg{}, nil) })
}

func TestErrorsWrap(t *testing.T) {
	base := context.DeadlineExceeded
	require.Nil(t, pacer.Permanent(nil))
	require.Nil(t, pacer.RetryAfter(nil, time.Second))
	require.ErrorIs(t, pacer.Permanent(base), base)
	require.ErrorIs(t, pacer.RetryAfter(base, time.Second), base)
	require.EqualError(t, pacer.RetryAfter(base, time.Second), "retry after 1s: context deadline exceeded")
	require.Zero(t, pacer.Attempt(context.Background()))
	require.Equal(t, "retry", pacer.EventRetry.String())
	require.Equal(t, "unknown", pacer.EventKind(99).String())
}
