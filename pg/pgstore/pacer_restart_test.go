//go:build unix

package pgstore_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestPostgresRestart runs a Runner on a PostgreSQL server of its own and
// adds values to it without pause while the server is stopped and started
// again on the same port and data directory (storetest.RunRestart), twice:
// by a fast shutdown (SIGINT) and by an immediate one (SIGQUIT), after
// which PostgreSQL recovers from its WAL as after a crash.
func TestPostgresRestart(t *testing.T) {
	t.Parallel()
	srv := startPGServer(t)
	ctx := t.Context()
	cfg, err := pgxpool.ParseConfig(srv.url())
	require.NoError(t, err)
	cfg.ConnConfig.ConnectTimeout = time.Second
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s, err := pgstore.New(ctx, pool, pgstore.Config{PollInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	t.Cleanup(func() { dumpIfFailed(t, pool) }) // before the server stops
	storetest.RunRestart(t, s, srv.start,
		storetest.Stop{Name: "SIGINT", Do: func() { srv.stop(syscall.SIGINT) }},
		storetest.Stop{Name: "SIGQUIT", Do: func() { srv.stop(syscall.SIGQUIT) }})
}

// dumpIfFailed logs the rows of the store's tables if t failed: which
// values the server still holds, to tell a value lost from one never
// handled.
func dumpIfFailed(t *testing.T, pool *pgxpool.Pool) {
	if !t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, q := range []string{
		"SELECT * FROM pacer.keys ORDER BY key",
		"SELECT convert_from(k.key, 'UTF8'), m.seq, convert_from(m.value, 'UTF8'), m.added_at FROM pacer.messages m LEFT JOIN pacer.keys k USING (queue, key_hash) ORDER BY k.key, m.seq",
	} {
		rows, err := pool.Query(ctx, q)
		if err != nil {
			t.Logf("%s: %v", q, err)
			continue
		}
		n := 0
		for rows.Next() {
			v, _ := rows.Values()
			t.Logf("%v", v)
			n++
		}
		rows.Close()
		t.Logf("%s: %d rows, %v", q, n, rows.Err())
	}
}
