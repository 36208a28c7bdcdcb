package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// A Claim does not wait for a transaction that holds a tenant's row: an
// AddTx that sets the weight of a tenant first in the turns writes its
// row and keeps it until the caller's transaction ends. The claim passes
// that tenant and leases the next one's key: it holds the lock of the
// queue's turns while it runs, so a claim that waited for the row would
// stop every claim of the queue for as long as the caller's transaction
// lasts (and could deadlock with it, if the transaction then adds to a
// key the claim holds).
func TestTenantClaimPassesAnAddTxThatSetsAWeight(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	// Both in the turns at the same virtual time: a's turn comes first.
	require.NoError(t, s.Add(ctx, "q", "a1", vals("1"), store.AddParams{Tenant: "a"}))
	require.NoError(t, s.Add(ctx, "q", "b1", vals("1"), store.AddParams{Tenant: "b"}))

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { require.NoError(t, tx.Rollback(ctx)) }()
	require.NoError(t, s.AddTx(ctx, tx, "q", "a2", vals("2"), store.AddParams{Tenant: "a", Weight: 3}))

	// Far longer than a claim takes: a claim that waits for the
	// transaction fails with the deadline.
	claimCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ls, _, err := s.Claim(claimCtx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err, "the claim waited for the transaction that holds a tenant's row")
	require.Len(t, ls, 1)
	require.Equal(t, "b1", ls[0].Key)
}
