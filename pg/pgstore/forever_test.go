package pgstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestForever: durations of store.Never mean never, in every place a
// duration goes: a lease's TTL and its Extend, a burst's quiet period, and
// a MaxWait, which is no bound.
func TestForever(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, connect(t, appName(t)))
	forever := store.ClaimParams{Keys: 1, TTL: store.Never}

	require.NoError(t, s.Add(ctx, "q", "k", vals("1"), store.AddParams{}))
	ls, next, err := s.Claim(ctx, "q", forever)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, store.Never, next, "a lease that never lapses")
	require.NoError(t, s.Extend(ctx, ls[0], store.Never))
	st, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 1, Keys: 1, Leased: 1}, st)
	more, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.False(t, more)

	require.NoError(t, s.Add(ctx, "q", "b", vals("1"), store.AddParams{Wait: store.Never, MaxWait: store.Never}))
	ls, next, err = s.Claim(ctx, "q", forever)
	require.NoError(t, err)
	require.Empty(t, ls)
	require.Equal(t, store.Never, next, "a burst that never goes quiet, without bound")
	st, err = s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 1, Keys: 1, Pending: 1}, st)

	require.NoError(t, s.Add(ctx, "q", "c", vals("1"), store.AddParams{Wait: store.Never, MaxWait: time.Millisecond}))
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
		require.NoError(t, s.Wait(ctx, "idle", time.Until(end)))
	}
	ls, _, err = s.Claim(ctx, "q", forever)
	require.NoError(t, err)
	require.Len(t, ls, 1, "MaxWait bounds a burst that never goes quiet")
	require.Equal(t, "c", ls[0].Key)
}
