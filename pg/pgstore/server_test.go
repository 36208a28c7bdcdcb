package pgstore_test

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
	"github.com/pacerkit/pacer/pg/pgstore"
)

// ttl is the TTL of leases that are not meant to lapse in a test.
const ttl = time.Minute

// serverURL is the PostgreSQL the tests use.
func serverURL() string { return enginetest.PostgresURL() }

// reachable tells, once for the whole run, why the test server cannot be
// used, or nil.
var reachable = sync.OnceValue(func() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, serverURL())
	if err != nil {
		return err
	}
	return conn.Close(ctx)
})

// connect returns a pool on the test server, closed after tb, with
// application_name set to name so that the test can find its sessions. It
// skips tb when no server answers, unless CI=true, where it fails.
func connect(tb testing.TB, name string) *pgxpool.Pool {
	tb.Helper()
	return connectWith(tb, name, func(*pgxpool.Config) {})
}

// connectWith is connect with the pool's configuration changed by set
// first.
func connectWith(tb testing.TB, name string, set func(*pgxpool.Config)) *pgxpool.Pool {
	tb.Helper()
	if err := reachable(); err != nil {
		enginetest.Missing(tb, fmt.Sprintf("pgstore: no PostgreSQL at %s (%s); start one or set PACER_POSTGRES_URL to run these tests",
			serverURL(), strings.Join(strings.Fields(err.Error()), " ")))
	}
	cfg, err := pgxpool.ParseConfig(serverURL())
	require.NoError(tb, err, "PACER_POSTGRES_URL")
	cfg.MaxConns = 16
	cfg.ConnConfig.RuntimeParams["application_name"] = name
	set(cfg)
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
	schema := "pacer_test_" + hex.EncodeToString(b)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(tb, err)
	})
	return schema
}

// newStore returns a Store on pool in a fresh schema, closed after tb.
func newStore(tb testing.TB, pool *pgxpool.Pool) *pgstore.Store {
	tb.Helper()
	s, err := pgstore.New(context.Background(), pool, pgstore.Config{Schema: freshSchema(tb, pool)})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// appName returns an application_name unique to tb.
func appName(tb testing.TB) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "pgstore-test-" + hex.EncodeToString(b)
}
