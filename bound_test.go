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

// With MaxValues, Add refuses a value at once with ErrFull while the Runner
// holds that many, debouncing, queued or in flight; room comes back as
// values are handled or dropped, and nothing accepted is refused later.
func TestMaxValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		rc := newRecorder(func(_ context.Context, key string, _ []int) error {
			switch key {
			case "slow":
				<-release
			case "bad":
				return pacer.Permanent(errors.New("bad payload"))
			}
			return nil
		})
		r := newRunner(t, pacer.Config[string, int]{Debounce: time.Second, MaxValues: 3, MaxBatch: 1, Workers: 2}, rc)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "slow", 1))
		require.NoError(t, r.Add(t.Context(), "slow", 2))
		require.NoError(t, r.Add(t.Context(), "bad", 3))
		require.ErrorIs(t, r.Add(t.Context(), "other", 4), pacer.ErrFull, "3 debouncing")
		st := stats(t, r)
		require.Equal(t, 3, st.Values)
		require.Equal(t, uint64(1), st.Refused)
		require.Equal(t, uint64(3), st.Received)

		time.Sleep(2 * time.Second) // slow 1 in flight, slow 2 queued; bad dropped
		st = stats(t, r)
		require.Equal(t, 2, st.Values)
		require.Equal(t, uint64(1), st.Dropped)
		require.NoError(t, r.Add(t.Context(), "other", 5))
		require.ErrorIs(t, r.Add(t.Context(), "other", 6), pacer.ErrFull, "1 in flight, 2 queued")

		close(release)
		synctest.Wait()
		time.Sleep(2 * time.Second)
		require.Zero(t, stats(t, r).Values)
		for i := range 3 {
			require.NoError(t, r.Add(t.Context(), "later", 10+i))
		}
		require.ErrorIs(t, r.Add(t.Context(), "later", 13), pacer.ErrFull)
		stop() // Shutdown queues the bursts it flushes whatever the bound
		st = stats(t, r)
		require.Equal(t, pacer.Stats{Debounce: time.Second, Received: 7, Handled: 6, Dropped: 1, Refused: 3, Batches: 7, Reruns: 3}, st)
		require.Len(t, rc.Drops(), 1)
	})
}

// Without MaxValues Add never refuses, and Stats still reports the values
// held.
func TestValuesUnbounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t, pacer.Config[string, int]{Debounce: time.Second}, newRecorder(nil))
		stop := start(t, r)
		for i := range 1000 {
			require.NoError(t, r.Add(t.Context(), "k", i))
		}
		require.Equal(t, 1000, stats(t, r).Values)
		time.Sleep(2 * time.Second)
		require.Zero(t, stats(t, r).Values)
		stop()
		require.Zero(t, stats(t, r).Refused)
	})
}
