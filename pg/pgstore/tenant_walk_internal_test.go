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

// claimBefore returns claim statement sql of a queue with tenants as
// the versions before this one make it, which they still run on this
// schema: its walk of the turns a call of tenant_turns (migrations 011
// and 013), or, if walk, the recursive walk of the version just before
// this one (walkBeforeSQL); then the tenants that leave the turns found
// by a scan of tenants_turns up to cand's last (leavingBeforeSQL), the
// turns counted and joined back to cand (ratedFairTurnsSQL, the rated
// claim's still), and the charge by a join of leased and picked
// (chargeBeforeSQL).
func claimBefore(tb testing.TB, sql string, walk bool) string {
	tb.Helper()
	from := strings.Index(sql, ", walk (tenant, vtime, weight, ready, loc, taken) AS (")
	to := strings.Index(sql, "), picked AS MATERIALIZED (")
	require.True(tb, from > 0 && to > from, "the statement walks the turns")
	at := strings.Index(sql[from:], "WHERE w.taken < ")
	require.Positive(tb, at)
	turns, _, _ := strings.Cut(sql[from+at+len("WHERE w.taken < "):], "\n")
	tenants := strings.Index(sql[from:], ".tenants AS tn") + from
	schema := sql[strings.LastIndex(sql[:tenants], "FROM ")+len("FROM ") : tenants]
	// {keys} bounds picked, which takes no more than {turns} keys: the
	// turns, here, are the keys.
	r := strings.NewReplacer("{schema}", schema, "{turns}", turns, "{keys}", turns)
	cand := `, cand AS MATERIALIZED (
	SELECT c.tenant, c.vtime, c.weight, c.ready, c.loc
	FROM ` + schema + `.tenant_turns($1, ` + turns + `) AS c
	WHERE (SELECT running FROM running)
`
	if walk {
		cand = r.Replace(walkBeforeSQL) + `, cand AS MATERIALIZED (
	SELECT w.tenant, w.vtime, w.weight, w.ready, w.loc FROM walk AS w WHERE w.ready > 0
`
	}
	sql = sql[:from] + cand + r.Replace(leavingBeforeSQL) + sql[to:]
	from = strings.Index(sql, "), picked AS MATERIALIZED (")
	to = strings.Index(sql, "), seen AS MATERIALIZED (")
	require.True(tb, from > 0 && to > from, "the statement picks")
	sql = sql[:from] + r.Replace(strings.TrimSuffix(ratedFairTurnsSQL, ")")) + sql[to:]
	sql = mustReplace(sql, leasedReturningFair, leasedReturning)
	from = strings.Index(sql, "), charged AS (")
	to = strings.Index(sql, "), upcoming AS (")
	require.True(tb, from > 0 && to > from, "the statement charges")
	sql = sql[:from] + r.Replace(chargeBeforeSQL) + sql[to:]
	if !walk {
		sql = mustReplace(sql, "\nWITH RECURSIVE running", "\nWITH running")
	}
	return sql
}

// walkBeforeSQL is walkTurnsSQL of the version before: the walk returns
// the tenants with a key ready alone.
const walkBeforeSQL = `, walk (tenant, vtime, weight, ready, loc, taken) AS (
	SELECT '', '-infinity'::double precision, 1, 0, NULL::tid, 0
	WHERE (SELECT running FROM running)
	UNION ALL
	SELECT x.tenant, x.vtime, x.weight, x.ready, x.loc, w.taken + 1
	FROM walk AS w CROSS JOIN LATERAL (
		SELECT tn.tenant, tn.vtime, tn.weight, tn.ctid AS loc, c.ready
		FROM {schema}.tenants AS tn CROSS JOIN LATERAL (
			SELECT count(*)::integer AS ready FROM (
				SELECT FROM {schema}.keys AS k
				WHERE k.queue = $1 AND k.tenant = tn.tenant AND k.ready_at <= statement_timestamp()
					AND NOT k.paused AND k.lanes = 0
				ORDER BY k.ready_at
				LIMIT {turns}
			) AS x
		) AS c
		WHERE tn.queue = $1 AND tn.vtime IS NOT NULL AND ROW(tn.vtime, tn.tenant) > ROW(w.vtime, w.tenant)
			AND c.ready > 0
		ORDER BY tn.vtime, tn.tenant
		LIMIT 1
		FOR NO KEY UPDATE OF tn SKIP LOCKED
	) AS x
	WHERE w.taken < {turns}
)`

// leavingBeforeSQL is leaving and gone of the versions before: a scan of
// the tenants in the turns before cand's last, each probed for a key
// that can come ready, and an UPDATE of those with none.
const leavingBeforeSQL = `), leaving AS MATERIALIZED (
	SELECT tn.tenant FROM {schema}.tenants AS tn
	WHERE tn.queue = $1 AND tn.vtime IS NOT NULL
		AND ROW(tn.vtime, tn.tenant) < ROW(
			coalesce((SELECT vtime FROM cand ORDER BY vtime DESC, tenant DESC LIMIT 1), 'infinity'),
			coalesce((SELECT tenant FROM cand ORDER BY vtime DESC, tenant DESC LIMIT 1), ''))
		AND (SELECT k.ready_at FROM {schema}.keys AS k WHERE k.queue = $1 AND k.tenant = tn.tenant
			AND k.ready_at IS NOT NULL ORDER BY k.ready_at LIMIT 1) IS NULL
		AND (SELECT running FROM running)
	ORDER BY tn.vtime, tn.tenant
	FOR UPDATE SKIP LOCKED
), gone AS (
	UPDATE {schema}.tenants AS t SET vtime = NULL, last = t.vtime
	WHERE t.queue = $1 AND t.tenant = ANY (ARRAY(SELECT tenant FROM leaving))
		AND NOT {schema}.tenant_has_keys($1, t.tenant)
		AND EXISTS (SELECT FROM leaving)
`

// chargeBeforeSQL is charged of the versions before: the leases counted
// by their tenants in picked.
const chargeBeforeSQL = `), charged AS (
	UPDATE {schema}.tenants AS t
	SET vtime = t.vtime + l.n / t.weight, last = t.vtime + l.n / t.weight
	FROM (SELECT p.tenant, count(*)::double precision AS n FROM leased JOIN picked AS p USING (key_hash) GROUP BY p.tenant) AS l
		JOIN cand AS c USING (tenant)
	WHERE t.ctid = c.loc AND t.tenant = c.tenant
`

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

// Instances of the versions before may claim beside this one while a
// service upgrades, with their claim statements (claimBefore): they take
// the same turns. Two queues get the same Adds (tenants of weights 1, 3
// and 5, a key or several each, some keys with a second value, which
// comes ready after the Ack of the first, and a tenant whose one key is
// leased, which the walks pass), and the same claims of 1 to 6 keys, each
// lease acked before the next claim: on one, this version's claims alone;
// on the other, those of the version with tenant_turns, of the version
// just before this one and of this one in turn. The tenants of their
// leases come in the same order, and the tenants' rows are the same after
// every claim.
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
	oldClaim := func(q string, p store.ClaimParams, walk bool) []store.Lease {
		_, args := s.claimStatement(q, p)
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer func() { require.NoError(t, tx.Commit(ctx)) }()
		_, err = tx.Exec(ctx, turnsLockSQL, s.turnsLock(q))
		require.NoError(t, err)
		ls, _, err := s.claimOn(ctx, tx, claimBefore(t, s.claimSQL(claimForm{keys: p.Keys, kind: fairClaim}), walk), q, args)
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
		if step%3 < 2 {
			got[1] = oldClaim("beside", p, step%3 == 1)
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
