package pgstore_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestNoTransactionWhileLeased: while leases are out, and their handlers
// run, none of the store's sessions sits in an open transaction.
func TestNoTransactionWhileLeased(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	name := appName(t)
	s := newStore(t, connect(t, name))
	observer := connect(t, appName(t))
	for _, k := range []string{"a", "b", "c"} {
		require.NoError(t, s.Add(ctx, "q", k, vals("1", "2"), store.AddParams{}))
	}
	waiting := make(chan error, 1)
	go func() { waiting <- s.Wait(ctx, "idle", time.Second) }() // the listener too
	defer func() { require.NoError(t, <-waiting) }()

	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 3, MaxBatch: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 3)
	noneInTransaction(t, observer, name)
	for _, l := range ls {
		require.NoError(t, s.Extend(ctx, l, ttl))
	}
	noneInTransaction(t, observer, name)
	_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	_, err = s.Finish(ctx, ls[1], store.Outcome{Kind: store.Retry, After: time.Minute})
	require.NoError(t, err)
	noneInTransaction(t, observer, name)
}

// noneInTransaction checks that sessions named name exist and that none of
// them is in a transaction between statements.
func noneInTransaction(t *testing.T, observer *pgxpool.Pool, name string) {
	t.Helper()
	var sessions, open int
	require.NoError(t, observer.QueryRow(t.Context(), `
		SELECT count(*), count(*) FILTER (WHERE state LIKE 'idle in transaction%')
		FROM pg_stat_activity WHERE application_name = $1`, name).Scan(&sessions, &open))
	require.Positive(t, sessions, "the store's sessions")
	require.Zero(t, open, "sessions idle in transaction")
}
