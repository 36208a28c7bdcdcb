package pgstore_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// A Runner cut off from PostgreSQL while its handler runs, by a partition
// that keeps its connections open and silent, stops its handler before
// another instance can lease the key, which then runs it
// (storetest.RunPartition).
func TestPartitionedHolderPostgres(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t, connect(t, appName(t)))
	cfg, err := pgxpool.ParseConfig(serverURL())
	require.NoError(t, err)
	storetest.RunPartition(t, storetest.Partition{
		Addr:   net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port))),
		Direct: instance(t, schema),
		Open: func(t *testing.T, addr string) store.Store {
			host, port, err := net.SplitHostPort(addr)
			require.NoError(t, err)
			p, err := strconv.Atoi(port)
			require.NoError(t, err)
			// The fallbacks too: with sslmode prefer, pgx tries a plain
			// connection after a server that refuses TLS, at the
			// fallback's address, which would go around the proxy.
			cfg.ConnConfig.Host, cfg.ConnConfig.Port = host, uint16(p)
			for _, f := range cfg.ConnConfig.Fallbacks {
				f.Host, f.Port = host, uint16(p)
			}
			cfg.ConnConfig.RuntimeParams["application_name"] = appName(t)
			pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
			require.NoError(t, err)
			t.Cleanup(pool.Close)
			cut, err := pgstore.New(context.Background(), pool, pgstore.Config{Schema: schema, PollInterval: 200 * time.Millisecond})
			require.NoError(t, err)
			t.Cleanup(func() { _ = cut.Close() })
			return cut
		},
	})
}
