package pacer_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
)

// By default a batch gets 25 attempts, about 84 minutes with the default
// backoff, then it is dropped and the key's next value goes on: a poison
// message does not block its key for ever.
func TestDefaultAttempts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(func(_ context.Context, _ string, batch []int) error {
			if batch[0] == 1 {
				return errors.New("poison")
			}
			return nil
		})
		r := newRunner(t, pacer.Config[string, int]{MaxBatch: 1}, rc)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "k", 1))
		require.NoError(t, r.Add(t.Context(), "k", 2))
		time.Sleep(2 * time.Hour)
		calls := rc.Calls()
		require.Len(t, calls, 26)
		require.Equal(t, call{"k", []int{1}, 5011 * time.Second, 25}, calls[24])
		require.Equal(t, call{"k", []int{2}, 5011 * time.Second, 1}, calls[25])
		require.Equal(t, []call{{Key: "k", Batch: []int{1}, At: 5011 * time.Second}}, rc.Drops())
		stop()
	})
}

// With Unlimited a failing value retries for ever and blocks its key in
// strict mode; Stats and EventRetry show the key and the values behind it.
func TestUnlimitedBlocksKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(func(_ context.Context, key string, batch []int) error {
			if key == "a" && batch[0] == 1 {
				return errors.New("poison")
			}
			return nil
		})
		r := newRunner(t, pacer.Config[string, int]{MaxBatch: 1, Retry: pacer.Backoff{Attempts: pacer.Unlimited}}, rc)
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background()) }()
		for _, v := range []int{1, 2, 3} {
			require.NoError(t, r.Add(t.Context(), "a", v))
		}
		require.NoError(t, r.Add(t.Context(), "b", 10))
		time.Sleep(1000 * time.Hour)
		require.Empty(t, rc.Drops())
		st := stats(t, r)
		require.Equal(t, 1, st.Retrying)
		require.Equal(t, 2, st.Blocked, "a2 and a3 wait behind a1")
		require.Equal(t, uint64(1), st.Handled, "b10 went on")
		require.Greater(t, st.Retries, uint64(25))
		var last pacer.Event[string]
		for _, e := range rc.events {
			if e.Kind == pacer.EventRetry {
				last = e
			}
		}
		require.Equal(t, 2, last.Behind)
		require.Equal(t, 1, last.Size)

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, r.Shutdown(ctx), context.Canceled) // a graceful one would wait for ever
		require.NoError(t, <-done)
		require.Len(t, rc.Drops(), 3)
	})
}
