//go:build unix

package pgstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// TestPlansMadeSmallStayBounded: PostgreSQL makes the generic plan of a
// prepared statement at its sixth run, from the sizes of then, and keeps
// it until an ANALYZE or a VACUUM of its tables; a plan made while a new
// schema's tables held a few keys reads the whole queue if that was
// cheapest then, and so on every run once the queue has grown, until
// autovacuum comes by, which a busy server delays. The store's statements
// leave the planner no such plan: made on a few keys, their plans still
// read a few pages per run once the queue holds 20,000 keys. The server is
// the test's own, with autovacuum off, so that nothing makes plans anew
// meanwhile, and pg_stat_statements counts the pages each statement reads.
func TestPlansMadeSmallStayBounded(t *testing.T) {
	t.Parallel()
	plansMadeSmall(t, false, everyStatement)
}

// TestTenantPlansMadeSmallStayBounded is TestPlansMadeSmallStayBounded in
// a queue with tenants: its plans made on 500 keys over 50 tenants, then
// 20,000 keys more over 200 tenants more.
func TestTenantPlansMadeSmallStayBounded(t *testing.T) {
	t.Parallel()
	plansMadeSmall(t, true, everyStatement)
}

// TestLanesPlansMadeSmallStayBounded is TestPlansMadeSmallStayBounded for
// the statements of several leases of a key (everyLanesStatement), whose
// functions (migration 014) take a few keys' rows at once, where a plan
// that joins them to keys or lanes may read the queue's.
func TestLanesPlansMadeSmallStayBounded(t *testing.T) {
	t.Parallel()
	plansMadeSmall(t, false, everyLanesStatement)
}

// plansMadeSmall runs the statements of a Runner's workers (every) on a
// few keys, of a tenant if tenants, then on 20,000 keys more, and fails if
// one of them reads more than maxPagesPerRun pages a run.
func plansMadeSmall(t *testing.T, tenants bool, every func(*testing.T, *pgstore.Store)) {
	needStatStatements(t)
	srv := startPGServer(t, "autovacuum=off", "shared_preload_libraries=pg_stat_statements")
	ctx := t.Context()
	cfg, err := pgxpool.ParseConfig(srv.url())
	require.NoError(t, err)
	cfg.MaxConns = 1 // one session, whose plans are the ones measured
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = pool.Exec(ctx, "CREATE EXTENSION pg_stat_statements")
	require.NoError(t, err)
	s, err := pgstore.New(ctx, pool, pgstore.Config{})
	require.NoError(t, err)
	defer s.Close()

	if tenants {
		// A queue of a few hundred keys over 50 tenants, as in
		// TestMeasureTenantThroughput: its plans, made from these
		// sizes, read every key of the queue for every tenant before
		// the turns were taken by tenant_turns (migration 011).
		for n := range 500 {
			require.NoError(t, s.Add(ctx, "q", fmt.Sprint("mid-", n), vals("1"), store.AddParams{Tenant: fmt.Sprint("mid-", n%50)}))
		}
	}
	for round := range 8 { // on 6 keys more at most: every plan is made here
		for n := range 6 {
			p := store.AddParams{}
			if tenants {
				p.Tenant = fmt.Sprint("small-", n%2)
			}
			require.NoError(t, s.Add(ctx, "q", fmt.Sprint("small-", round, "-", n), vals("1", "2"), p))
		}
		every(t, s)
	}
	// What auto mode picks for these plans, whose estimates are small;
	// forced, so that the test does not depend on that choice.
	_, err = pool.Exec(ctx, "SET plan_cache_mode = force_generic_plan")
	require.NoError(t, err)
	fill(t, pool, pgstore.DefaultSchema, "q", 20_000, 2)
	if tenants {
		// The filled keys over 200 tenants, first in the turns.
		_, err = pool.Exec(ctx, `UPDATE pacer.keys SET tenant = 'big-' || (substr(convert_from(key, 'UTF8'), 5)::integer % 200)
			WHERE queue = 'q' AND tenant IS NULL`)
		require.NoError(t, err)
		_, err = pool.Exec(ctx, `INSERT INTO pacer.tenants (queue, tenant, vtime, last)
			SELECT 'q', 'big-' || i, 0, 0 FROM generate_series(0, 199) AS i`)
		require.NoError(t, err)
	}
	_, err = pool.Exec(ctx, "SELECT pg_stat_statements_reset()")
	require.NoError(t, err)
	for range 3 {
		every(t, s)
	}

	rows, err := pool.Query(ctx, `
		SELECT query, calls, shared_blks_hit + shared_blks_read FROM pg_stat_statements
		WHERE query LIKE '%"pacer".%' AND calls > 0`)
	require.NoError(t, err)
	type stat struct {
		query          string
		calls, buffers int64
	}
	var stats []stat
	for rows.Next() {
		var st stat
		require.NoError(t, rows.Scan(&st.query, &st.calls, &st.buffers))
		stats = append(stats, st)
	}
	require.NoError(t, rows.Err())
	require.GreaterOrEqual(t, len(stats), 6, "the statements ran")
	for _, st := range stats {
		t.Logf("%4d pages per run: %.100s", st.buffers/st.calls, strings.Join(strings.Fields(st.query), " "))
	}
	for _, st := range stats {
		require.LessOrEqual(t, st.buffers/st.calls, int64(maxPagesPerRun), "a plan reads the queue: %s", st.query)
	}
}

// TestRatedPlansMadeSmallStayBounded, TestRatedTenantPlansMadeSmallStayBounded
// and TestRatedLanesPlansMadeSmallStayBounded are the three above with a
// KeyRate on every claim (keyrate.go, migration 015), one that defers no
// key.
func TestRatedPlansMadeSmallStayBounded(t *testing.T) {
	t.Parallel()
	plansMadeSmall(t, false, everyStatementWith(neverDefers))
}

func TestRatedTenantPlansMadeSmallStayBounded(t *testing.T) {
	t.Parallel()
	plansMadeSmall(t, true, everyStatementWith(neverDefers))
}

func TestRatedLanesPlansMadeSmallStayBounded(t *testing.T) {
	t.Parallel()
	plansMadeSmall(t, false, everyLanesStatementWith(neverDefers))
}

// neverDefers is a KeyRate that defers no key of these tests.
var neverDefers = store.KeyRate{Interval: time.Microsecond, Burst: 1}

// maxPagesPerRun bounds the pages that a statement of the store reads per
// run on a few keys; a statement that reads the 20,000 keys of
// TestPlansMadeSmallStayBounded reads several hundred.
const maxPagesPerRun = 100

// everyStatement runs each statement that a Runner's workers use: Claim,
// Extend, FinishAndClaim with Defer (Finish's statement and Claim's in one
// transaction) and with Ack (a shared flight that claims), Finish with Ack
// (a shared flight that does not), Drop and Hold, and Release; and those
// of an operator: PauseQueue, ResumeQueue, RetryNow, PauseKey, ResumeKey
// and DropKey.
func everyStatement(t *testing.T, s *pgstore.Store) { everyStatementWith(store.KeyRate{})(t, s) }

// everyStatementWith is everyStatement with rate on every claim.
func everyStatementWith(rate store.KeyRate) func(*testing.T, *pgstore.Store) {
	return func(t *testing.T, s *pgstore.Store) {
		t.Helper()
		ctx := t.Context()
		p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute, KeyRate: rate}
		claim := func() store.Lease {
			ls, _, err := s.Claim(ctx, "q", p)
			require.NoError(t, err)
			require.Len(t, ls, 1)
			return ls[0]
		}
		next := func(ls []store.Lease, err error) store.Lease {
			require.NoError(t, err)
			require.Len(t, ls, 1)
			return ls[0]
		}
		l := claim()
		require.NoError(t, s.Extend(ctx, l, time.Minute))
		_, ls, _, err := s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Defer}, p)
		l = next(ls, err)
		_, ls, _, err = s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Ack}, p)
		l = next(ls, err)
		_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
		require.NoError(t, err)
		_, err = s.Finish(ctx, claim(), store.Outcome{Kind: store.Drop, Err: "x"})
		require.NoError(t, err)
		l = claim()
		_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Hold})
		require.NoError(t, err)
		released, err := s.Release(ctx, "q", l.Key)
		require.NoError(t, err)
		require.True(t, released)

		done := func(ok bool, err error) {
			t.Helper()
			require.NoError(t, err)
			require.True(t, ok)
		}
		done(s.PauseQueue(ctx, "q"))
		done(s.ResumeQueue(ctx, "q"))
		l = claim()
		_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Retry, After: time.Hour})
		require.NoError(t, err)
		done(s.RetryNow(ctx, "q", l.Key))
		done(s.PauseKey(ctx, "q", l.Key))
		done(s.ResumeKey(ctx, "q", l.Key))
		n, err := s.DropKey(ctx, "q", l.Key, "x")
		require.NoError(t, err)
		require.Positive(t, n)
	}
}

// everyLanesStatement runs the statements of a Runner's workers with
// PerKey 2 (lanes.go): Claim, FinishAndClaim with Ack (a flight that
// claims) and Finish with Ack (a flight that does not), on a key with two
// leases out at once and another key.
func everyLanesStatement(t *testing.T, s *pgstore.Store) {
	everyLanesStatementWith(store.KeyRate{})(t, s)
}

// everyLanesStatementWith is everyLanesStatement with rate on every claim.
func everyLanesStatementWith(rate store.KeyRate) func(*testing.T, *pgstore.Store) {
	return func(t *testing.T, s *pgstore.Store) {
		t.Helper()
		ctx := t.Context()
		p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute, PerKey: 2, KeyRate: rate}
		require.NoError(t, s.Add(ctx, "q", "lanes", vals("1", "2", "3"), store.AddParams{}))
		var ls []store.Lease
		for range 3 { // the oldest ready key, "lanes" among the first
			got, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 2, MaxBatch: 1, TTL: time.Minute, PerKey: 2, KeyRate: rate})
			require.NoError(t, err)
			require.NotEmpty(t, got)
			ls = append(ls, got...)
		}
		_, next, _, err := s.FinishAndClaim(ctx, ls[0], store.Outcome{Kind: store.Ack}, p)
		require.NoError(t, err)
		require.Len(t, next, 1)
		for _, l := range append(ls[1:], next...) {
			_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
			require.NoError(t, err)
		}
	}
}

// needStatStatements ends t as enginetest.Missing does when PostgreSQL's
// pg_stat_statements, a module of its contrib, is not installed beside its
// server program (in ../lib or ../lib/postgresql of its real directory).
func needStatStatements(t *testing.T) {
	t.Helper()
	server, err := filepath.EvalSymlinks(filepath.Join(postgresBin(t), "postgres"))
	require.NoError(t, err)
	prefix := filepath.Dir(filepath.Dir(server))
	for _, lib := range []string{"lib", "lib/postgresql"} {
		if _, err := os.Stat(filepath.Join(prefix, lib, "pg_stat_statements.so")); err == nil {
			return
		}
	}
	enginetest.Missing(t, "pgstore: PostgreSQL's pg_stat_statements is not installed beside "+server+": install PostgreSQL's contrib to run this test")
}
