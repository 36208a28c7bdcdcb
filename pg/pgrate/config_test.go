package pgrate_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgrate"
)

// TestConfigErrors: NewBucket and NewKeyed refuse a config that is not
// valid, or no pool, naming the field, before they ask the server.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	pool := unreachable(t)
	for _, tc := range []struct {
		cfg  pgrate.BucketConfig
		want string
	}{
		{pgrate.BucketConfig{Name: "a"}, "pgrate: BucketConfig.Rate must be in [1e-09, 1e+06], got 0"},
		{pgrate.BucketConfig{Rate: -1, Name: "a"}, "BucketConfig.Rate"},
		{pgrate.BucketConfig{Rate: 2e6, Name: "a"}, "BucketConfig.Rate"},
		{pgrate.BucketConfig{Rate: 1, Burst: -1, Name: "a"}, "pgrate: BucketConfig.Burst must be >= 0, got -1"},
		{pgrate.BucketConfig{Rate: 1e-9, Burst: 2, Name: "a"}, "pgrate: BucketConfig.Burst must be at most 1"},
		{pgrate.BucketConfig{Rate: 1}, "pgrate: BucketConfig.Name is required"},
		{pgrate.BucketConfig{Rate: 1, Name: "a", Schema: "a-b"}, `pgrate: BucketConfig.Schema "a-b" is not an identifier`},
		{pgrate.BucketConfig{Rate: 1, Name: "a", Schema: "1a"}, "BucketConfig.Schema"},
	} {
		_, err := pgrate.NewBucket(t.Context(), pool, tc.cfg)
		require.ErrorContains(t, err, tc.want, "%+v", tc.cfg)
		kc := pgrate.KeyedConfig{Rate: tc.cfg.Rate, Burst: tc.cfg.Burst, Name: tc.cfg.Name, Schema: tc.cfg.Schema}
		_, err = pgrate.NewKeyed(t.Context(), pool, kc)
		require.ErrorContains(t, err, "pgrate: KeyedConfig.")
	}
	_, err := pgrate.NewBucket(t.Context(), nil, pgrate.BucketConfig{Rate: 1, Name: "a"})
	require.EqualError(t, err, "pgrate: NewBucket needs a pool, got nil")
	_, err = pgrate.NewKeyed(t.Context(), nil, pgrate.KeyedConfig{Rate: 1, Name: "a"})
	require.EqualError(t, err, "pgrate: NewKeyed needs a pool, got nil")

	ok := connect(t)
	_, err = pgrate.NewBucket(t.Context(), ok, pgrate.BucketConfig{Rate: 1, Name: "a", Schema: freshSchema(t, ok)})
	require.NoError(t, err, "Burst has a default")
}

// unreachable returns a pool on a port where no server listens.
func unreachable(t *testing.T) *pgxpool.Pool {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	pool, err := pgxpool.New(context.Background(), "postgres://postgres@"+addr+"/test?connect_timeout=1")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

// TestUnreachable: NewBucket fails at once on a server that refuses
// connections, naming the package and the schema; a Bucket whose server
// went away returns an error naming the package and the bucket, with
// FailOpen's answer from Allow.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	pool := unreachable(t)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err := pgrate.NewBucket(ctx, pool, pgrate.BucketConfig{Rate: 1, Name: "a"})
	require.ErrorContains(t, err, `pgrate: schema "pacer_rate": `)
	require.ErrorContains(t, err, "connect")
	require.NoError(t, ctx.Err(), "NewBucket waited for ctx's deadline")

	up := connect(t)
	schema := freshSchema(t, up)
	gone := connect(t)
	closed := newBucket(t, gone, pgrate.BucketConfig{Rate: 1, Name: "api", Schema: schema})
	open := newBucket(t, gone, pgrate.BucketConfig{Rate: 1, Name: "api", Schema: schema, FailOpen: true})
	gone.Close()
	ok, err := closed.Allow(ctx)
	require.ErrorContains(t, err, `pgrate: Allow on "api": `)
	require.False(t, ok)
	ok, err = open.Allow(ctx)
	require.Error(t, err)
	require.True(t, ok, "FailOpen")
	require.ErrorContains(t, open.Wait(ctx), `pgrate: Wait on "api": `)
	require.ErrorContains(t, open.Pause(ctx, time.Second), `pgrate: Pause on "api": `)
	ok, err = open.Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok, "a pause set through this value holds it, even if the server did not hear of it")
}
