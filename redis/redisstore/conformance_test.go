package redisstore_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestConformance holds the Store to the contract of package store, and
// pacer Runners on it to their guarantees across instances
// (storetest.Run): each scenario under its own prefix, with a twin on a
// client of its own, as another process's.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		s, _, p := newStore(t)
		twin, err := redisstore.New(t.Context(), client(t), redisstore.Config{Prefix: p})
		require.NoError(t, err)
		t.Cleanup(func() { _ = twin.Close() })
		return storetest.Harness{Store: s, Twin: twin, Queue: t.Name()}
	})
}
