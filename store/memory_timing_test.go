package store_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// mockMemory returns a Memory on a mock clock set to a present-day reading,
// where a "forever" duration would wrap if added without saturating.
func mockMemory(t *testing.T) (*store.Memory, *clock.Mock) {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	return store.NewMemory(store.MemoryConfig{Clock: clk}), clk
}

var one = store.ClaimParams{Keys: 1, TTL: time.Hour}

func add(t *testing.T, m *store.Memory, key string, p store.AddParams, vals ...string) {
	t.Helper()
	bs := make([][]byte, len(vals))
	for i, v := range vals {
		bs[i] = []byte(v)
	}
	require.NoError(t, m.Add(t.Context(), "q", key, bs, p))
}

// claim claims with p and returns the keys leased, their first lease, and
// next.
func claim(t *testing.T, m *store.Memory, p store.ClaimParams) ([]string, store.Lease, time.Duration) {
	t.Helper()
	ls, next, err := m.Claim(t.Context(), "q", p)
	require.NoError(t, err)
	var keys []string
	for _, l := range ls {
		keys = append(keys, l.Key)
	}
	if len(ls) == 0 {
		return nil, store.Lease{}, next
	}
	return keys, ls[0], next
}

func finish(t *testing.T, m *store.Memory, l store.Lease, o store.Outcome) bool {
	t.Helper()
	more, err := m.Finish(t.Context(), l, o)
	require.NoError(t, err)
	return more
}

// TestMemoryDeadlinesExact checks every deadline to the nanosecond: a
// debounce moved by each Add and bounded by MaxWait, a retry delay, a
// lease's TTL and its Extend.
func TestMemoryDeadlinesExact(t *testing.T) {
	m, clk := mockMemory(t)
	t0 := clk.Now()
	p := store.AddParams{Wait: 10 * time.Second, MaxWait: 25 * time.Second}
	add(t, m, "k", p, "1")
	_, _, next := claim(t, m, one)
	require.Equal(t, 10*time.Second, next)
	clk.Add(9 * time.Second)
	add(t, m, "k", p, "2")
	_, _, next = claim(t, m, one)
	require.Equal(t, 10*time.Second, next, "an Add moves the deadline")
	clk.Add(9 * time.Second)
	add(t, m, "k", p, "3")
	_, _, next = claim(t, m, one)
	require.Equal(t, 7*time.Second, next, "MaxWait bounds it: 25s after the first value")
	clk.Add(7*time.Second - 1)
	keys, _, next := claim(t, m, one)
	require.Empty(t, keys)
	require.Equal(t, time.Duration(1), next)
	clk.Add(1)
	keys, l, _ := claim(t, m, one)
	require.Equal(t, []string{"k"}, keys)
	require.Len(t, l.Values, 3)
	require.True(t, t0.Equal(l.First), "First: %v, want %v", l.First, t0)

	finish(t, m, l, store.Outcome{Kind: store.Retry, After: 5 * time.Second})
	_, _, next = claim(t, m, one)
	require.Equal(t, 5*time.Second, next)
	clk.Add(5*time.Second - 1)
	keys, _, _ = claim(t, m, one)
	require.Empty(t, keys)
	clk.Add(1)
	_, l, _ = claim(t, m, store.ClaimParams{Keys: 1, TTL: 3 * time.Second})
	require.Equal(t, 2, l.Attempt)

	_, _, next = claim(t, m, one)
	require.Equal(t, 3*time.Second, next, "the lease lapses after its TTL")
	clk.Add(3*time.Second - 1)
	require.NoError(t, m.Extend(t.Context(), l, 2*time.Second), "a lease lives until its TTL")
	clk.Add(2*time.Second - 1)
	keys, _, next = claim(t, m, one)
	require.Empty(t, keys)
	require.Equal(t, time.Duration(1), next)
	clk.Add(1)
	_, err := m.Finish(t.Context(), l, store.Outcome{Kind: store.Ack})
	require.ErrorIs(t, err, store.ErrLeaseLost, "a lease lapses at its TTL")
	_, l2, _ := claim(t, m, one)
	require.Equal(t, 3, l2.Attempt)
	require.Greater(t, l2.Fence, l.Fence)
}

// TestMemorySaturates checks that a delay of Never never comes due, at a
// clock reading where adding it would wrap.
func TestMemorySaturates(t *testing.T) {
	m, clk := mockMemory(t)
	add(t, m, "r", store.AddParams{}, "1")
	_, l, _ := claim(t, m, one)
	finish(t, m, l, store.Outcome{Kind: store.Retry, After: store.Never})
	add(t, m, "w", store.AddParams{Wait: store.Never}, "1")
	add(t, m, "t", store.AddParams{}, "1")
	_, lt, _ := claim(t, m, store.ClaimParams{Keys: 1, TTL: store.Never})
	require.Equal(t, "t", lt.Key)
	keys, _, next := claim(t, m, one)
	require.Empty(t, keys)
	require.Equal(t, store.Never, next)
	clk.Add(100 * 365 * 24 * time.Hour)
	keys, _, next = claim(t, m, one)
	require.Empty(t, keys)
	require.Equal(t, store.Never, next)
	require.NoError(t, m.Extend(t.Context(), lt, store.Never))
	st, err := m.Stats(t.Context(), "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 3, Keys: 3, Pending: 1, Leased: 1, Retrying: 1}, st)
}

// TestMemoryTies checks the order of keys ready at one instant: the order
// in which their ready instant was set.
func TestMemoryTies(t *testing.T) {
	m, clk := mockMemory(t)
	for _, k := range []string{"c", "a", "b"} {
		add(t, m, k, store.AddParams{}, k)
	}
	keys, _, _ := claim(t, m, store.ClaimParams{Keys: 3, TTL: time.Hour})
	require.Equal(t, []string{"c", "a", "b"}, keys, "added at one instant")

	add(t, m, "x", store.AddParams{Wait: 10 * time.Second}, "1")
	add(t, m, "y", store.AddParams{Wait: 10 * time.Second, MaxWait: 10 * time.Second}, "1")
	clk.Add(5 * time.Second)
	add(t, m, "z", store.AddParams{Wait: 5 * time.Second}, "1")
	add(t, m, "y", store.AddParams{Wait: 10 * time.Second, MaxWait: 10 * time.Second}, "2")
	clk.Add(5 * time.Second)
	keys, _, _ = claim(t, m, store.ClaimParams{Keys: 3, TTL: time.Hour})
	require.Equal(t, []string{"x", "y", "z"}, keys, "due at one instant: y's deadline did not move")
}

// TestMemoryWait checks Wait's timing in a synctest bubble, on the real
// clock that Memory uses by default.
func TestMemoryWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		m := store.NewMemory(store.MemoryConfig{})
		start := time.Now()
		require.NoError(t, m.Wait(ctx, "q", 3*time.Second))
		require.Equal(t, 3*time.Second, time.Since(start), "nothing happens: d")

		add(t, m, "k", store.AddParams{Wait: 2 * time.Second}, "1")
		start = time.Now()
		require.NoError(t, m.Wait(ctx, "q", time.Minute))
		require.Equal(t, 2*time.Second, time.Since(start), "until the burst is due")
		start = time.Now()
		require.NoError(t, m.Wait(ctx, "q", time.Minute))
		require.Zero(t, time.Since(start), "a key is ready")

		_, _, _ = claim(t, m, one)
		done := make(chan error)
		go func() { done <- m.Wait(ctx, "q", time.Minute) }()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Wait returned with nothing ready")
		default:
		}
		add(t, m, "j", store.AddParams{}, "1")
		require.NoError(t, <-done)
		require.Equal(t, 5*time.Second, time.Since(start), "an Add wakes it at once")

		cut, cancel := context.WithCancel(ctx)
		go func() { done <- m.Wait(cut, "idle", store.Never) }()
		synctest.Wait()
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
	})
}

// TestMemoryWaitMockClock checks that Wait sleeps on the configured clock.
func TestMemoryWaitMockClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, clk := mockMemory(t)
		add(t, m, "k", store.AddParams{Wait: 5 * time.Second}, "1")
		done := make(chan error)
		go func() { done <- m.Wait(t.Context(), "q", time.Minute) }()
		synctest.Wait()
		clk.Add(5*time.Second - 1)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("Wait returned before the burst was due")
		default:
		}
		clk.Add(1)
		require.NoError(t, <-done)
	})
}

// TestMemoryRejects checks that invalid arguments are errors that change
// nothing.
func TestMemoryRejects(t *testing.T) {
	m, _ := mockMemory(t)
	ctx := t.Context()
	require.Error(t, m.Add(ctx, "q", "k", [][]byte{{1}}, store.AddParams{Wait: -1}))
	require.Error(t, m.Add(ctx, "q", "k", [][]byte{{1}}, store.AddParams{MaxWait: -1}))
	for _, p := range []store.ClaimParams{{Keys: 0, TTL: 1}, {Keys: 1}, {Keys: 1, TTL: 1, MaxBatch: -1}} {
		_, _, err := m.Claim(ctx, "q", p)
		require.Error(t, err, "%+v", p)
	}
	add(t, m, "k", store.AddParams{}, "1")
	_, l, _ := claim(t, m, one)
	_, err := m.Finish(ctx, l, store.Outcome{})
	require.Error(t, err)
	_, err = m.Finish(ctx, l, store.Outcome{Kind: store.Hold + 1})
	require.Error(t, err)
	require.Error(t, m.Extend(ctx, l, 0))
	st, err := m.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 1, Keys: 1, Leased: 1}, st)
	require.False(t, finish(t, m, l, store.Outcome{Kind: store.Ack}))
}

// TestMemoryCopies checks that Memory keeps its own copies of values.
func TestMemoryCopies(t *testing.T) {
	m, _ := mockMemory(t)
	v := []byte("abc")
	require.NoError(t, m.Add(t.Context(), "q", "k", [][]byte{v}, store.AddParams{}))
	v[0] = 'x'
	_, l, _ := claim(t, m, one)
	require.Equal(t, "abc", string(l.Values[0]))
	l.Values[0][0] = 'y'
	finish(t, m, l, store.Outcome{Kind: store.Retry})
	_, l, _ = claim(t, m, one)
	require.Equal(t, "abc", string(l.Values[0]))
}
