package pgrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgrate"
)

// TestSweepDeletesIdleRowsInBatches: a sweep reads at most SweepBatch rows
// and deletes those of buckets full and not paused; sweeps in turn go
// round the table, and leave the rows that still matter.
func TestSweepDeletesIdleRowsInBatches(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	schema := freshSchema(t, pool)
	ctx := context.Background()
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 0.1, Burst: 1, Name: "accounts", Schema: schema, SweepEvery: -1})
	// Rows that matter: an empty bucket, a pause, and a Bucket's.
	require.Equal(t, 1, keyAllowN(t, k, "busy", 1))
	require.NoError(t, k.PauseKey(ctx, "paused", time.Minute))
	require.Equal(t, 1, allowN(t, newBucket(t, pool, pgrate.BucketConfig{Rate: 0.1, Name: "accounts", Schema: schema}), 1))
	// 2,500 idle keys, full since a second ago, of this Name and another.
	const idle = 2500
	_, err := pool.Exec(ctx, `INSERT INTO `+pgx.Identifier{schema, "rate_buckets"}.Sanitize()+`
		SELECT convert_to(CASE WHEN i % 2 = 0 THEN 'accounts' ELSE 'users' END, 'UTF8'), true, convert_to('idle-' || i, 'UTF8'),
		       now() - interval '1 second', now() - interval '1 second', now() - interval '1 second'
		FROM generate_series(1, $1) i`, idle)
	require.NoError(t, err)
	require.Equal(t, idle+3, rows(t, pool, schema))

	deleted := 0
	for range 3 {
		n, err := k.Sweep(ctx)
		require.NoError(t, err)
		require.LessOrEqual(t, n, pgrate.SweepBatch, "a sweep deleted more than it may read")
		require.Positive(t, n)
		deleted += n
	}
	require.Equal(t, idle, deleted, "three sweeps of %d rows go round %d", pgrate.SweepBatch, idle+3)
	require.Equal(t, 3, rows(t, pool, schema), "a row that matters was deleted")
	n, err := k.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, keyAllowN(t, k, "busy", 1), "the busy key's row was lost")
	require.Zero(t, keyAllowN(t, k, "paused", 1), "the paused key's row was lost")
}

// TestSweepRunsInCalls: with SweepEvery set, a call made once it passed
// sweeps, and the rows of keys that filled up again go; a paused key's
// stays.
func TestSweepRunsInCalls(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	schema := freshSchema(t, pool)
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 100, Burst: 2, Name: "accounts", Schema: schema, SweepEvery: 100 * time.Millisecond})
	for _, key := range []string{"a", "b", "c"} {
		require.Equal(t, 1, keyAllowN(t, k, key, 1))
	}
	require.NoError(t, k.PauseKey(context.Background(), "d", time.Minute))
	require.Equal(t, 4, rows(t, pool, schema))
	// A's bucket is full 10 ms later, on the server's clock, and the
	// sweep is due 100 ms after NewKeyed, on the local one: the real ones,
	// which no fake clock moves.
	time.Sleep(150 * time.Millisecond)
	require.Zero(t, keyAllowN(t, k, "d", 1), "d is paused")
	require.Equal(t, 1, rows(t, pool, schema), "the sweep left idle rows, or deleted the paused key's")
}
