package pgstore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestConformance holds the Store to the contract of package store, with a
// twin on the same schema through a pool of its own, as another process's.
func TestConformance(t *testing.T) {
	schema := freshSchema(t, connect(t, appName(t)))
	open := func() *pgstore.Store {
		s, err := pgstore.New(context.Background(), connect(t, appName(t)), pgstore.Config{Schema: schema})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	s, twin := open(), open()
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		return storetest.Harness{Store: s, Twin: twin, Queue: t.Name()}
	})
}
