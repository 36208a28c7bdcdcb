package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// TestClaimPlanIsReused: with many ready keys, PostgreSQL keeps using one
// generic plan for Claim instead of planning each Claim anew, which would
// make Claims slower as the backlog grows.
func TestClaimPlanIsReused(t *testing.T) {
	t.Parallel()
	claimPlanIsReused(t, store.KeyRate{})
}

// TestRatedClaimPlanIsReused is TestClaimPlanIsReused with a KeyRate.
func TestRatedClaimPlanIsReused(t *testing.T) {
	t.Parallel()
	claimPlanIsReused(t, store.KeyRate{Interval: time.Microsecond})
}

func claimPlanIsReused(t *testing.T, rate store.KeyRate) {
	ctx := t.Context()
	connect(t, appName(t)) // skips without a server
	cfg, err := pgxpool.ParseConfig(serverURL())
	require.NoError(t, err)
	cfg.MaxConns = 1 // one session, whose prepared statements we can read
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close) // after the schema's cleanup
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	backlog(t, pool, schema, "q", 20_000, 1)

	for range 20 {
		ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 2, TTL: time.Minute, KeyRate: rate})
		require.NoError(t, err)
		require.Len(t, ls, 2)
	}
	var generic, custom int64
	require.NoError(t, pool.QueryRow(ctx, `
		SELECT generic_plans, custom_plans FROM pg_prepared_statements
		WHERE statement LIKE '%picked AS MATERIALIZED%'`).Scan(&generic, &custom))
	require.Positive(t, generic, "Claim is planned anew each time (%d custom plans)", custom)
}
