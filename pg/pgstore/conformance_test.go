package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestConformance holds the Store to the contract of package store, and
// pacer Runners on it to their guarantees across instances
// (storetest.Run), with a twin on the same schema through a pool of its
// own, as another process's. The TxAdder scenario begins its transactions
// on the first Store's pool.
func TestConformance(t *testing.T) {
	schema := freshSchema(t, connect(t, appName(t)))
	open := func() (*pgstore.Store, *pgxpool.Pool) {
		pool := connect(t, appName(t))
		s, err := pgstore.New(context.Background(), pool, pgstore.Config{Schema: schema})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s, pool
	}
	s, pool := open()
	twin, _ := open()
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		return storetest.Harness{Store: s, Twin: twin, Queue: t.Name(),
			BeginTx: func(ctx context.Context) (storetest.Tx, error) { return pool.Begin(ctx) }}
	})
}
