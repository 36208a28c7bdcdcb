package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// A Claim with PerKey > 1 in a queue with tenants takes its turns under
// the lock of the queue's turns, as every other claim of such a queue
// does: while another transaction holds that lock, the Claim waits, and
// it leases once the lock is let go.
func TestLanesClaimTakesTheLockOfTheTurns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	app := appName(t)
	pool := connect(t, app)
	s := newStore(t, pool)
	require.NoError(t, s.Add(ctx, "q", "a1", vals("1", "2"), store.AddParams{Tenant: "a"}))
	require.NoError(t, s.Add(ctx, "q", "b1", vals("1"), store.AddParams{Tenant: "b"}))

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(context.Background()) }()
	_, err = tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('pacer.pgstore.turns'), hashtext($1::text))`,
		pgstore.TurnsLock(s, "q"))
	require.NoError(t, err)

	type claimed struct {
		leases []store.Lease
		err    error
	}
	done := make(chan claimed, 1)
	go func() {
		ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 2, MaxBatch: 1, TTL: ttl, PerKey: 2})
		done <- claimed{ls, err}
	}()
	// The Claim's session waits for an advisory lock, and the Claim has
	// not returned.
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case c := <-done:
			t.Fatalf("the Claim returned %d leases (err %v) while another transaction held the lock of the turns", len(c.leases), c.err)
		default:
		}
		var waiting bool
		require.NoError(t, pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE application_name = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory')`, app).Scan(&waiting))
		if waiting {
			break
		}
		require.True(t, time.Now().Before(deadline), "no session of the Claim waited for the lock of the turns")
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, tx.Rollback(ctx))
	c := <-done
	require.NoError(t, c.err)
	require.Len(t, c.leases, 2, "each tenant's turn, once the lock is let go")
	require.ElementsMatch(t, []string{"a1", "b1"}, []string{c.leases[0].Key, c.leases[1].Key})
}
