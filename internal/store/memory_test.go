package store

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := NewMemory[string, int](1, nil)
		require.NoError(t, err)
		ctx := context.Background()
		t0 := time.Now()
		require.NoError(t, m.Put(ctx, "a", 1, 2))
		require.NoError(t, m.Put(ctx, "b", 3))
		require.Equal(t, 3, m.Active())

		l, err := m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, "a", l.Key)
		require.Equal(t, []int{1}, l.Values)
		require.Equal(t, 1, l.Attempt)
		require.Equal(t, 1, must(m.Gauges(ctx)).InFlight)
		require.NoError(t, m.Retry(ctx, l, 10*time.Second))

		l, err = m.Get(ctx) // b was waiting; a is delayed
		require.NoError(t, err)
		require.Equal(t, "b", l.Key)
		require.False(t, must(m.Ack(ctx, l)))

		l, err = m.Get(ctx) // blocks until a's retry is due
		require.NoError(t, err)
		require.Equal(t, 10*time.Second, time.Since(t0))
		require.Equal(t, []int{1}, l.Values)
		require.Equal(t, 2, l.Attempt)
		require.NoError(t, m.Defer(ctx, l, 0)) // does not count
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, l.Attempt)

		require.NoError(t, m.Hold(ctx, l))
		require.Equal(t, 1, must(m.Gauges(ctx)).Held)
		require.Zero(t, m.Active())
		require.NoError(t, m.Put(ctx, "a", 4)) // waits behind the held head
		require.Zero(t, m.Active())
		require.False(t, must(m.Release(ctx, "b")))
		require.True(t, must(m.Release(ctx, "a")))
		require.Equal(t, 3, m.Active())
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, l.Attempt, "released: attempts start over")
		require.True(t, must(m.Drop(ctx, l, nil)), "2 and 4 are left")

		// Close hands back ready, delayed and held values alike.
		l, _ = m.Get(ctx)
		require.NoError(t, m.Retry(ctx, l, time.Hour))
		require.NoError(t, m.Put(ctx, "c", 5))
		l, _ = m.Get(ctx)
		require.NoError(t, m.Hold(ctx, l))
		left := map[string][]int{}
		m.Close(func(key string, vs []int) { left[key] = append(left[key], vs...) })
		require.Equal(t, map[string][]int{"a": {2, 4}, "c": {5}}, left)
		require.ErrorIs(t, m.Put(ctx, "d", 6), ErrStopped)
		_, err = m.Get(ctx)
		require.ErrorIs(t, err, ErrStopped)
		m.Close(nil) // idempotent
	})
}

func TestMemoryStopWakesGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := NewMemory[string, int](0, nil)
		require.NoError(t, err)
		errc := make(chan error, 1)
		go func() {
			_, err := m.Get(context.Background())
			errc <- err
		}()
		synctest.Wait()
		m.Stop()
		require.ErrorIs(t, <-errc, ErrStopped)
		m.Close(nil)
	})
}

// TestMemoryStopKeepsRetries checks that a stopped Memory still hands out a
// pending retry, then reports ErrStopped with only held values left.
func TestMemoryStopKeepsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := NewMemory[string, int](0, nil)
		require.NoError(t, err)
		ctx := context.Background()
		require.NoError(t, m.Put(ctx, "a", 1))
		require.NoError(t, m.Put(ctx, "b", 2))
		l, err := m.Get(ctx)
		require.NoError(t, err)
		require.NoError(t, m.Hold(ctx, l))
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.NoError(t, m.Retry(ctx, l, time.Second))
		m.Stop()
		require.Equal(t, 1, m.Active(), "b waits for its retry")
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, "b", l.Key)
		require.Equal(t, 2, l.Attempt)
		require.False(t, must(m.Ack(ctx, l)))
		require.Zero(t, m.Active())
		_, err = m.Get(ctx)
		require.ErrorIs(t, err, ErrStopped)
		var left []int
		m.Close(func(_ string, vs []int) { left = append(left, vs...) })
		require.Equal(t, []int{1}, left, "the held value")
	})
}

// TestMemoryRetryKeepsBatch checks, as the Runner sees it in coalesce mode,
// that a retried batch is handed out again as it was: a value put during
// the backoff gets a call, and attempts, of its own.
func TestMemoryRetryKeepsBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := NewMemory[string, int](0, nil)
		require.NoError(t, err)
		defer m.Close(nil)
		ctx := context.Background()
		require.NoError(t, m.Put(ctx, "a", 1, 2))
		l, err := m.Get(ctx)
		require.NoError(t, err)
		require.NoError(t, m.Retry(ctx, l, time.Second))
		require.NoError(t, m.Put(ctx, "a", 3))
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, []int{1, 2}, l.Values)
		require.Equal(t, 2, l.Attempt)
		require.True(t, must(m.Drop(ctx, l, nil)), "3 is left")
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, []int{3}, l.Values)
		require.Equal(t, 1, l.Attempt)
		require.False(t, must(m.Ack(ctx, l)))
	})
}

// TestMemoryRetrying checks the count of keys waiting for a retry and of
// the values blocked behind them, as the Runner reads it in strict mode.
func TestMemoryRetrying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, err := NewMemory[string, int](1, nil)
		require.NoError(t, err)
		defer m.Close(nil)
		ctx := context.Background()
		require.NoError(t, m.Put(ctx, "a", 1, 2))
		l, err := m.Get(ctx)
		require.NoError(t, err)
		require.NoError(t, m.Retry(ctx, l, time.Second))
		require.NoError(t, m.Put(ctx, "a", 3))
		g := must(m.Gauges(ctx))
		require.Equal(t, 1, g.Retrying)
		require.Equal(t, 2, g.Blocked, "2 and 3 wait behind 1")
		l, err = m.Get(ctx) // the retry comes due
		require.NoError(t, err)
		g = must(m.Gauges(ctx))
		require.Zero(t, g.Retrying)
		require.Zero(t, g.Blocked)
		require.True(t, must(m.Ack(ctx, l)))
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
