package pgstore

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/store"
)

// claimBefore returns claim statement sql of a queue with tenants as the
// versions before this one make it, which they still run on this schema:
// its walk of the turns a call of tenant_turns (migrations 011 and 013).
func claimBefore(tb testing.TB, sql string) string {
	tb.Helper()
	from := strings.Index(sql, ", walk (tenant, vtime, weight, ready, loc, taken) AS (")
	to := strings.Index(sql, "), leaving AS MATERIALIZED (")
	require.True(tb, from > 0 && to > from, "the statement walks the turns")
	walk := sql[from:to]
	at := strings.Index(walk, "WHERE w.taken < ")
	require.Positive(tb, at)
	turns, _, _ := strings.Cut(walk[at+len("WHERE w.taken < "):], "\n")
	tenants := strings.Index(walk, ".tenants AS tn")
	schema := walk[strings.LastIndex(walk[:tenants], "FROM ")+len("FROM ") : tenants]
	sql = sql[:from] + `, cand AS MATERIALIZED (
	SELECT c.tenant, c.vtime, c.weight, c.ready, c.loc
	FROM ` + schema + `.tenant_turns($1, ` + turns + `) AS c
	WHERE (SELECT running FROM running)
` + sql[to:]
	return mustReplace(sql, "\nWITH RECURSIVE running", "\nWITH running")
}

// internalStore returns a Store in a fresh schema of the test server,
// dropped after tb, and its pool; it skips tb as connect does when no
// server answers.
func internalStore(tb testing.TB) (*Store, *pgxpool.Pool) {
	tb.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, enginetest.PostgresURL())
	require.NoError(tb, err)
	tb.Cleanup(pool.Close)
	if err := pool.Ping(ctx); err != nil {
		enginetest.Missing(tb, fmt.Sprintf("pgstore: no PostgreSQL at %s (%v)", enginetest.PostgresURL(), err))
	}
	b := make([]byte, 6)
	_, _ = crand.Read(b)
	schema := "pacer_test_" + hex.EncodeToString(b)
	tb.Cleanup(func() {
		_, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(tb, err)
	})
	s, err := New(ctx, pool, Config{Schema: schema})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = s.Close() })
	return s, pool
}

// Instances of a version before walkTurnsSQL may claim beside this one
// while a service upgrades, with their claim statements (claimBefore):
// the two take the same turns. Two queues get the
// same Adds (tenants of weights 1, 3 and 5, a key or several each, some keys
// with a second value, which comes ready after the Ack of the first, and
// a tenant whose one key is leased, which the walks pass), and the same
// claims of 1 to 6 keys, each lease acked before the next claim: on one,
// this version's claims alone; on the other, the version before's and
// this one's in turn. The tenants of their leases come in the same order.
func TestTenantClaimBesideTheOneBefore(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, pool := internalStore(t)
	rnd := rand.New(rand.NewPCG(1, 2))
	type add struct {
		key, tenant string
		weight      int
		vals        int
	}
	var adds []add
	for tn := range 12 {
		for k := range 1 + rnd.IntN(4) {
			adds = append(adds, add{fmt.Sprint("t", tn, "-", k), fmt.Sprint("t", tn), 1 + 2*(tn%3), 1 + rnd.IntN(2)})
		}
	}
	rnd.Shuffle(len(adds), func(i, j int) { adds[i], adds[j] = adds[j], adds[i] })
	held := map[string]store.Lease{}
	for _, q := range []string{"alone", "beside"} {
		// A tenant in the turns whose one key is leased, first in the
		// turns (its name before the others'): each walk passes it.
		require.NoError(t, s.Add(ctx, q, "held", [][]byte{[]byte("x")}, store.AddParams{Tenant: "a-held"}))
		ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Hour})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		held[q] = ls[0]
		for _, a := range adds {
			for v := range a.vals {
				require.NoError(t, s.Add(ctx, q, a.key, [][]byte{fmt.Appendf(nil, "%d", v)},
					store.AddParams{Tenant: a.tenant, Weight: a.weight}))
			}
		}
	}
	tenantOf := func(key string) string { return key[:strings.IndexByte(key, '-')] }
	oldClaim := func(q string, p store.ClaimParams) []store.Lease {
		_, args := s.claimStatement(q, p)
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { require.NoError(t, tx.Commit(ctx)) }()
		_, err = tx.Exec(ctx, turnsLockSQL, s.turnsLock(q))
		require.NoError(t, err)
		ls, _, err := s.claimOn(ctx, tx, claimBefore(t, s.claimSQL(claimForm{keys: p.Keys, kind: fairClaim})), q, args)
		require.NoError(t, err)
		return ls
	}
	// Each tenant's place in the turns (out or its virtual time), its own
	// virtual time and its weight.
	tenantRows := func(q string) []string {
		rows, err := pool.Query(ctx, "SELECT format('%s %s %s %s', tenant, coalesce(vtime::text, 'out'), last, weight) FROM "+
			pgx.Identifier{s.cfg.Schema}.Sanitize()+".tenants WHERE queue = $1 ORDER BY tenant", q)
		require.NoError(t, err)
		got, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return got
	}
	var turns [2][]string
	for step := 0; ; step++ {
		require.Less(t, step, 200)
		p := store.ClaimParams{Keys: 1 + rnd.IntN(6), MaxBatch: 1, TTL: time.Hour}
		var got [2][]store.Lease
		var err error
		got[0], _, err = s.Claim(ctx, "alone", p)
		require.NoError(t, err)
		if step%2 == 0 {
			got[1] = oldClaim("beside", p)
		} else {
			got[1], _, err = s.Claim(ctx, "beside", p)
			require.NoError(t, err)
		}
		for i, ls := range got {
			for _, l := range ls {
				turns[i] = append(turns[i], tenantOf(l.Key))
				_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
				require.NoError(t, err)
			}
		}
		require.Equal(t, turns[0], turns[1], "the same turns, step %d", step)
		require.Equal(t, tenantRows("alone"), tenantRows("beside"), "the same virtual times, step %d", step)
		if len(got[0]) == 0 && len(got[1]) == 0 {
			break
		}
	}
	want := 0
	for _, a := range adds {
		want += a.vals
	}
	require.Len(t, turns[0], want, "every value once")
	out := 0
	for _, r := range tenantRows("beside") {
		if strings.Contains(r, " out ") {
			out++
		}
	}
	require.Positive(t, out, "tenants left the turns")
	for _, l := range held {
		_, err := s.Finish(context.Background(), l, store.Outcome{Kind: store.Ack})
		require.NoError(t, err)
	}
}
