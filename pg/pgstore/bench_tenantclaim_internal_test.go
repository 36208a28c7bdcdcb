//go:build linux

package pgstore

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestMeasureTenantClaimStatement breaks down what the claim statement of
// a queue with tenants costs the server over the one without: a queue of
// 500 ready keys of 10 values each over 100 tenants, and 5 tenants first
// in the turns whose keys are all leased (as the keys a Runner's workers
// hold: each walk passes them), claimed 8 keys at a time, MaxBatch 1,
// each claim after the lock of the turns in a transaction rolled back,
// so that every claim meets the same queue. The forms run in turn, one
// claim each, on one session, whose server process's CPU time
// (/proc/PID/schedstat: the server runs on this machine) is read around
// each claim's lock and statement; the tables are vacuumed every 30
// turns. It prints the median and lower quartile of each form's CPU a
// claim against the form without tenants: the claim without tenants (the
// oldest ready keys, whatever their tenants), the versions before's
// (claimBefore: the walk in tenant_turns, the walk in the statement),
// this version's, and forms of it each with
// one part taken out (not correct claims, a measurement of the parts:
// the update of the tenants' virtual times, charged; the same update of
// last alone, which no index holds, a HOT update where vtime's is not;
// the tenants that leave the turns, gone). The claims' rolled
// back updates of vtime leave entries in tenants_turns, before the live
// ones, that each walk passes until the next vacuum: as a queue's
// committed claims leave the versions they replace. PACER_BENCH_ROUNDS
// sets the rounds of 30 turns (40).
func TestMeasureTenantClaimStatement(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	ctx := context.Background()
	s, pool := internalStore(t)
	quoted := pgx.Identifier{s.cfg.Schema}.Sanitize()
	_, err := pool.Exec(ctx, strings.ReplaceAll(`
		INSERT INTO {s}.keys (queue, key_hash, key, tail, ready_at, tenant)
		SELECT 'q', sha256(('key-' || i)::bytea), ('key-' || i)::bytea, 10,
			now() - interval '1 hour' + i * interval '1 microsecond', 't' || (i % 100)
		FROM generate_series(1, 500) AS i;
		INSERT INTO {s}.messages (queue, key_hash, seq, value, added_at)
		SELECT 'q', sha256(('key-' || i)::bytea), n, '"0123456789abcd"'::bytea, now() - interval '1 hour'
		FROM generate_series(1, 500) AS i, generate_series(0, 9) AS n;
		INSERT INTO {s}.keys (queue, key_hash, key, tail, batch, ready_at, leased_until, leased_at, fence, tenant)
		SELECT 'q', sha256(('held-' || i)::bytea), ('held-' || i)::bytea, 10, 1,
			now() + interval '1 hour', now() + interval '1 hour', now(), 1, 'a' || i
		FROM generate_series(1, 5) AS i;
		INSERT INTO {s}.tenants (queue, tenant, vtime, last)
		SELECT 'q', tenant, 0, 0 FROM {s}.keys GROUP BY tenant`, "{s}", quoted))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "VACUUM ANALYZE "+quoted+".keys, "+quoted+".messages, "+quoted+".tenants")
	require.NoError(t, err)

	fair := s.claimSQL(claimForm{keys: 8, kind: fairClaim})
	forms := []measuredClaim{
		{"without tenants", s.claimSQL(claimForm{keys: 8})},
		{"tenants, tenant_turns", claimBefore(t, fair, false)},
		{"tenants, the version before", claimBefore(t, fair, true)},
		{"tenants", fair},
		{"tenants without charged", withoutCTE(t, fair, "), charged AS (", "), upcoming AS (")},
		{"tenants, charged writes last alone", mustReplace(fair, "SET vtime = t.vtime + l.n / t.weight, last", "SET last")},
		{"tenants, none leaves the turns", mustReplace(fair, "CASE WHEN w.ready = 0 AND", "CASE WHEN false AND")},
	}
	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	measureClaimStatements(t, ctx, conn.Conn(), forms, benchRounds(40), "VACUUM "+quoted+".keys, "+quoted+".tenants",
		func(tx pgx.Tx, sql string) (pgx.Rows, error) {
			if _, err := tx.Exec(ctx, turnsLockSQL, s.turnsLock("q")); err != nil {
				return nil, err
			}
			return tx.Query(ctx, sql, "q", int64(1), interval(time.Minute), []byte("h"))
		})
}

// withoutCTE is sql without the CTE that starts at from, up to to.
func withoutCTE(tb testing.TB, sql, from, to string) string {
	tb.Helper()
	start, end := strings.Index(sql, from), strings.Index(sql, to)
	require.True(tb, start > 0 && end > start, "the statement has %q", from)
	return sql[:start] + sql[end:]
}
