package pgrate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/pg/pgrate"
)

// reachable tells, once for the whole run, why the test server cannot be
// used, or nil.
var reachable = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, enginetest.PostgresURL())
	if err != nil {
		return err
	}
	return conn.Close(ctx)
})

// connect returns a pool of up to 16 connections on the test server,
// closed after tb. It skips tb when no server answers, unless CI=true,
// where it fails.
func connect(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	if err := reachable(); err != nil {
		enginetest.Missing(tb, fmt.Sprintf("pgrate: no PostgreSQL at %s (%s); start one or set PACER_POSTGRES_URL to run these tests",
			enginetest.PostgresURL(), strings.Join(strings.Fields(err.Error()), " ")))
	}
	cfg, err := pgxpool.ParseConfig(enginetest.PostgresURL())
	require.NoError(tb, err, "PACER_POSTGRES_URL")
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	return pool
}

// freshSchema returns a schema name no other test uses, dropped after tb.
func freshSchema(tb testing.TB, pool *pgxpool.Pool) string {
	tb.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "pgrate_test_" + hex.EncodeToString(b)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(tb, err)
	})
	return schema
}

// newBucket returns a Bucket of cfg on pool.
func newBucket(tb testing.TB, pool *pgxpool.Pool, cfg pgrate.BucketConfig) *pgrate.Bucket {
	tb.Helper()
	l, err := pgrate.NewBucket(context.Background(), pool, cfg)
	require.NoError(tb, err)
	return l
}

// newKeyed returns a Keyed of cfg on pool.
func newKeyed(tb testing.TB, pool *pgxpool.Pool, cfg pgrate.KeyedConfig) *pgrate.Keyed {
	tb.Helper()
	k, err := pgrate.NewKeyed(context.Background(), pool, cfg)
	require.NoError(tb, err)
	return k
}

// rows returns how many rows the buckets' table of schema holds.
func rows(tb testing.TB, pool *pgxpool.Pool, schema string) int {
	tb.Helper()
	var n int
	require.NoError(tb, pool.QueryRow(context.Background(),
		"SELECT count(*) FROM "+pgx.Identifier{schema, "rate_buckets"}.Sanitize()).Scan(&n))
	return n
}
