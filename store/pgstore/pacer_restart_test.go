//go:build unix

package pgstore_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/runnertest"
	"github.com/pacerkit/pacer/store/pgstore"
)

// TestPostgresRestart runs a Runner on a PostgreSQL server of its own and
// adds values to it without pause while the server is stopped and started
// again on the same port and data directory (runnertest.Restart), twice:
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
	runnertest.Restart(t, s, srv.start,
		runnertest.Stop{Name: "SIGINT", Do: func() { srv.stop(syscall.SIGINT) }},
		runnertest.Stop{Name: "SIGQUIT", Do: func() { srv.stop(syscall.SIGQUIT) }})
}
