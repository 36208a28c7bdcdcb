package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// The operators on a key of lanes (several leases out, lanes.go):
// RetryNow makes its retried batch ready now, which is leased again as it
// was; DropKey moves the values of its lanes and of its head to one dead
// letter, in order, ends its leases, and leaves the queue's count exact.
func TestOperatorsOnKeyOfLanes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := instance(t, freshSchema(t, connect(t, appName(t))))
	p := store.ClaimParams{Keys: 2, MaxBatch: 1, TTL: ttl, PerKey: 2}
	require.NoError(t, s.Add(ctx, "q", "k", vals("1", "2", "3", "4"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Len(t, ls, 2)

	more, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Retry, After: time.Hour, Err: "later"})
	require.NoError(t, err)
	require.True(t, more)
	none, _, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Empty(t, none, "the retried batch waits for its delay, and the values behind it too")
	ok, err := s.RetryNow(ctx, "q", "k")
	require.NoError(t, err)
	require.True(t, ok, "RetryNow of a key whose first lane waits for a Retry")
	again, _, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Len(t, again, 1)
	require.Equal(t, vals("1"), again[0].Values)
	require.Equal(t, 2, again[0].Attempt)
	ok, err = s.RetryNow(ctx, "q", "k")
	require.NoError(t, err)
	require.False(t, ok, "RetryNow of a key with no batch waiting for a Retry")

	_, err = s.Finish(ctx, ls[1], store.Outcome{Kind: store.Ack}) // "2" goes: a gap
	require.NoError(t, err)
	n, err := s.DropKey(ctx, "q", "k", "gone")
	require.NoError(t, err)
	require.Equal(t, 3, n)
	dls, err := s.DeadLetters(ctx, "q", 0, 10)
	require.NoError(t, err)
	require.Len(t, dls, 1)
	require.Equal(t, vals("1", "3", "4"), dls[0].Values)
	_, err = s.Finish(ctx, again[0], store.Outcome{Kind: store.Ack})
	require.ErrorIs(t, err, store.ErrLeaseLost, "the lease of a dropped key")
	st, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Zero(t, st.Values)
	require.Zero(t, st.Keys)
	require.NoError(t, s.Add(ctx, "q", "k", vals("a", "b"), store.AddParams{MaxValues: 2}), "the count is exact")
	require.ErrorIs(t, s.Add(ctx, "q", "k", vals("c"), store.AddParams{MaxValues: 2}), store.ErrFull)
}

// A key of lanes that takes an Add to a burst (AddParams.Wait), while a lease is out
// and a slot free, keeps watching for the lapse of that lease: it is
// ready when the lease lapses, not only when the burst is due.
func TestLanesLapseUnderABurst(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := instance(t, freshSchema(t, connect(t, appName(t))))
	short := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: 300 * time.Millisecond, PerKey: 2}
	require.NoError(t, s.Add(ctx, "q", "k", vals("1"), store.AddParams{}))
	l, _, err := s.Claim(ctx, "q", short)
	require.NoError(t, err)
	require.Len(t, l, 1)
	require.NoError(t, s.Add(ctx, "q", "k", vals("2"), store.AddParams{Wait: time.Hour}))
	deadline := time.Now().Add(10 * time.Second)
	for {
		ls, _, err := s.Claim(ctx, "q", short)
		require.NoError(t, err)
		if len(ls) > 0 {
			require.Equal(t, vals("1"), ls[0].Values, "the lapsed batch, leased again")
			require.Equal(t, 2, ls[0].Attempt)
			break
		}
		require.True(t, time.Now().Before(deadline), "the lapsed lease's batch was not leased again")
		time.Sleep(50 * time.Millisecond)
	}
}
