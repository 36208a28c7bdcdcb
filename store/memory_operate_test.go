package store_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// waitBlocks starts a Wait of an hour on m's queue, and reports whether
// it is still blocked once every goroutine of the bubble is, and a func
// that returns once it returned.
func waitBlocks(t *testing.T, m *store.Memory) (blocked bool, returned func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- m.Wait(t.Context(), "q", time.Hour) }()
	synctest.Wait()
	select {
	case err := <-done:
		require.NoError(t, err)
		return false, func() {}
	default:
	}
	return true, func() {
		synctest.Wait()
		select {
		case err := <-done:
			require.NoError(t, err)
		default:
			require.Fail(t, "Wait still blocked")
		}
	}
}

// A Wait on a paused queue with a ready key, or on a queue whose only
// ready key is paused, sleeps, so that a worker does not spin on what
// Claim will not lease; the resume wakes it at once, and so does RetryNow.
func TestMemoryWaitSleepsThroughPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		m := store.NewMemory(store.MemoryConfig{})
		add(t, m, "k", store.AddParams{}, "1")
		blocked, _ := waitBlocks(t, m)
		require.False(t, blocked, "a ready key ends a Wait at once")

		_, err := m.PauseQueue(ctx, "q")
		require.NoError(t, err)
		blocked, returned := waitBlocks(t, m)
		require.True(t, blocked, "Wait on a paused queue")
		_, err = m.ResumeQueue(ctx, "q")
		require.NoError(t, err)
		returned()

		_, err = m.PauseKey(ctx, "q", "k")
		require.NoError(t, err)
		blocked, returned = waitBlocks(t, m)
		require.True(t, blocked, "Wait on a queue whose only ready key is paused")
		_, err = m.ResumeKey(ctx, "q", "k")
		require.NoError(t, err)
		returned()

		_, l, _ := claim(t, m, one)
		finish(t, m, l, store.Outcome{Kind: store.Defer, After: 30 * time.Minute})
		blocked, returned = waitBlocks(t, m)
		require.True(t, blocked, "Wait on a queue whose only key is deferred")
		_, err = m.RetryNow(ctx, "q", "k")
		require.NoError(t, err)
		returned()
	})
}

// Memory counts a paused key's values in Ready or Retrying at no time,
// not even before a Claim: it never leaves a paused key in its schedule.
func TestMemoryStatsOfPausedKeysExact(t *testing.T) {
	ctx := t.Context()
	m, clk := mockMemory(t)
	add(t, m, "r", store.AddParams{}, "r1")
	_, l, _ := claim(t, m, one)
	finish(t, m, l, store.Outcome{Kind: store.Retry, After: time.Minute})
	add(t, m, "b", store.AddParams{Wait: time.Second}, "b1")
	for _, k := range []string{"r", "b", "e"} {
		ok, err := m.PauseKey(ctx, "q", k)
		require.NoError(t, err)
		require.True(t, ok)
	}
	add(t, m, "e", store.AddParams{}, "e1")
	st, err := m.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 3, Keys: 3, Pending: 1, PausedKeys: 3}, st)
	clk.Add(time.Hour)
	st, err = m.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 3, Keys: 3, PausedKeys: 3}, st, "their deadlines passed")
	keys, _, next := claim(t, m, one)
	require.Empty(t, keys)
	require.Equal(t, store.Never, next)
}
