package redisstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// TestPrefixesShareNothing: a Store of Prefix P and one of Prefix "P:eu"
// share nothing, though "{Prefix:queue}" written plainly names P's queue
// "eu:orders" and P:eu's queue "orders" alike: the second neither counts
// nor leases what the first added.
func TestPrefixesShareNothing(t *testing.T) {
	a, c, p := newStore(t)
	b, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: p + ":eu"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() }) // before newStore's cleanup, which deletes both's keys
	ctx := t.Context()
	require.NoError(t, a.Add(ctx, "eu:orders", "k", [][]byte{[]byte("v")}, store.AddParams{}))

	st, err := b.Stats(ctx, "orders")
	require.NoError(t, err)
	require.Zero(t, st, "the second Store counts the first's values")
	ls, _, err := b.Claim(ctx, "orders", store.ClaimParams{Keys: 1, TTL: time.Minute})
	require.NoError(t, err)
	require.Empty(t, ls, "the second Store leased the first's key")

	ls, _, err = a.Claim(ctx, "eu:orders", store.ClaimParams{Keys: 1, TTL: time.Minute})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, [][]byte{[]byte("v")}, ls[0].Values)
}
