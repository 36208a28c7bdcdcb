package pgstore_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/frozenproxy"
	"github.com/pacerkit/pacer/internal/runnertest"
	"github.com/pacerkit/pacer/pg/pgstore"
)

// A Runner cut off from PostgreSQL while its handler runs, by a partition
// that keeps its connections open and silent, stops its handler before
// another instance can lease the key, which then runs it
// (runnertest.PartitionedHolder).
func TestPartitionedHolderPostgres(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t, connect(t, appName(t)))
	direct := instance(t, schema)
	cfg, err := pgxpool.ParseConfig(serverURL())
	require.NoError(t, err)
	proxy := frozenproxy.Start(t, net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))))
	host, port, err := net.SplitHostPort(proxy.Addr())
	require.NoError(t, err)
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(p)
	cfg.ConnConfig.RuntimeParams["application_name"] = appName(t)
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	cut, err := pgstore.New(context.Background(), pool, pgstore.Config{Schema: schema, PollInterval: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cut.Close() })
	runnertest.PartitionedHolder(t, cut, direct, proxy)
}
