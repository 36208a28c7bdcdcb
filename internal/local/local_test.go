package local

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newEngine returns an Engine leasing at most maxBatch values at a time,
// whose values left at Close go to left, if not nil.
func newEngine(t *testing.T, maxBatch int, left map[string][]int) *Engine[string, int] {
	t.Helper()
	cfg := Config[string, int]{MaxBatch: maxBatch}
	if left != nil {
		cfg.Left = func(key string, vs []int) { left[key] = append(left[key], vs...) }
	}
	e, err := New(cfg)
	require.NoError(t, err)
	return e
}

// put puts vs to key one by one.
func put(t *testing.T, e *Engine[string, int], key string, vs ...int) {
	t.Helper()
	for _, v := range vs {
		require.NoError(t, e.Put(context.Background(), key, v))
	}
}

func ack(e *Engine[string, int], l engine.Lease[string, int]) (bool, error) {
	return e.Finish(context.Background(), l, store.Outcome{Kind: store.Ack})
}

func drop(e *Engine[string, int], l engine.Lease[string, int]) (bool, error) {
	return e.Finish(context.Background(), l, store.Outcome{Kind: store.Drop})
}

// end ends l with a Retry, Defer or Hold, which leave its key with values.
func end(t *testing.T, e *Engine[string, int], l engine.Lease[string, int], kind store.OutcomeKind, after time.Duration) error {
	t.Helper()
	more, err := e.Finish(context.Background(), l, store.Outcome{Kind: kind, After: after})
	require.True(t, more, "the key of a lease retried, deferred or held has values")
	return err
}

func TestLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		left := map[string][]int{}
		m := newEngine(t, 1, left)
		ctx := context.Background()
		t0 := time.Now()
		put(t, m, "a", 1, 2)
		put(t, m, "b", 3)
		require.Equal(t, 3, m.active())

		l, err := m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, "a", l.Key)
		require.Equal(t, []int{1}, l.Values)
		require.Equal(t, 1, l.Attempt)
		require.Equal(t, 1, must(m.Gauges(ctx)).InFlight)
		require.NoError(t, end(t, m, l, store.Retry, 10*time.Second))

		l, err = m.Get(ctx) // b was waiting; a is delayed
		require.NoError(t, err)
		require.Equal(t, "b", l.Key)
		require.False(t, must(ack(m, l)))

		l, err = m.Get(ctx) // blocks until a's retry is due
		require.NoError(t, err)
		require.Equal(t, 10*time.Second, time.Since(t0))
		require.Equal(t, []int{1}, l.Values)
		require.Equal(t, 2, l.Attempt)
		require.NoError(t, end(t, m, l, store.Defer, 0)) // does not count
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, l.Attempt)

		require.NoError(t, end(t, m, l, store.Hold, 0))
		require.Equal(t, 1, must(m.Gauges(ctx)).Held)
		require.Zero(t, m.active())
		put(t, m, "a", 4) // waits behind the held head
		require.Zero(t, m.active())
		require.False(t, must(m.Release(ctx, "b")))
		require.True(t, must(m.Release(ctx, "a")))
		require.Equal(t, 3, m.active())
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, l.Attempt, "released: attempts start over")
		require.True(t, must(drop(m, l)), "2 and 4 are left")

		// Close hands back ready, delayed and held values alike.
		l, _ = m.Get(ctx)
		require.NoError(t, end(t, m, l, store.Retry, time.Hour))
		put(t, m, "c", 5)
		l, _ = m.Get(ctx)
		require.NoError(t, end(t, m, l, store.Hold, 0))
		m.Close()
		require.Equal(t, map[string][]int{"a": {2, 4}, "c": {5}}, left)
		require.ErrorIs(t, m.Put(ctx, "d", 6), engine.ErrClosed)
		_, err = m.Get(ctx)
		require.ErrorIs(t, err, engine.ErrClosed)
		m.Close() // idempotent
	})
}

func TestDrainWakesGet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newEngine(t, 0, nil)
		errc := make(chan error, 1)
		go func() {
			_, err := m.Get(context.Background())
			errc <- err
		}()
		synctest.Wait()
		m.Drain()
		require.ErrorIs(t, <-errc, engine.ErrClosed)
		m.Close()
	})
}

// TestDrainKeepsRetries checks that a draining Engine still hands out a
// pending retry, then reports ErrStopped with only held values left.
func TestDrainKeepsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		left := map[string][]int{}
		m := newEngine(t, 0, left)
		ctx := context.Background()
		put(t, m, "a", 1)
		put(t, m, "b", 2)
		l, err := m.Get(ctx)
		require.NoError(t, err)
		require.NoError(t, end(t, m, l, store.Hold, 0))
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.NoError(t, end(t, m, l, store.Retry, time.Second))
		m.Drain()
		require.Equal(t, 1, m.active(), "b waits for its retry")
		require.ErrorIs(t, m.Put(ctx, "c", 3), engine.ErrClosed, "draining")
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, "b", l.Key)
		require.Equal(t, 2, l.Attempt)
		require.False(t, must(ack(m, l)))
		require.Zero(t, m.active())
		_, err = m.Get(ctx)
		require.ErrorIs(t, err, engine.ErrClosed)
		m.Close()
		require.Equal(t, map[string][]int{"a": {1}}, left, "the held value")
	})
}

// TestRetryKeepsBatch checks, as the Runner sees it in coalesce mode,
// that a retried batch is handed out again as it was: a value put during
// the backoff gets a call, and attempts, of its own.
func TestRetryKeepsBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newEngine(t, 0, nil)
		defer m.Close()
		ctx := context.Background()
		put(t, m, "a", 1, 2)
		l, err := m.Get(ctx)
		require.NoError(t, err)
		require.NoError(t, end(t, m, l, store.Retry, time.Second))
		put(t, m, "a", 3)
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, []int{1, 2}, l.Values)
		require.Equal(t, 2, l.Attempt)
		require.True(t, must(drop(m, l)), "3 is left")
		l, err = m.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, []int{3}, l.Values)
		require.Equal(t, 1, l.Attempt)
		require.False(t, must(ack(m, l)))
	})
}

// TestRetrying checks the count of keys waiting for a retry and of the
// values blocked behind them, as the Runner reads it in strict mode.
func TestRetrying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newEngine(t, 1, nil)
		defer m.Close()
		ctx := context.Background()
		put(t, m, "a", 1, 2)
		l, err := m.Get(ctx)
		require.NoError(t, err)
		require.NoError(t, end(t, m, l, store.Retry, time.Second))
		put(t, m, "a", 3)
		g := must(m.Gauges(ctx))
		require.Equal(t, 1, g.Retrying)
		require.Equal(t, 2, g.Blocked, "2 and 3 wait behind 1")
		require.Equal(t, 2, m.Behind("a"))
		l, err = m.Get(ctx) // the retry comes due
		require.NoError(t, err)
		g = must(m.Gauges(ctx))
		require.Zero(t, g.Retrying)
		require.Zero(t, g.Blocked)
		require.True(t, must(ack(m, l)))
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
