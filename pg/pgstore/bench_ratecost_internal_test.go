//go:build linux

package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
)

// TestMeasureRatedClaimStatement breaks down what the rated form of the
// claim statement costs the server over the form without a KeyRate: a
// queue of 500 ready keys of 40 values each (one in 8 with its last value
// alone left, whose lease keeps T in key_rates), whose rows have a T that
// passed (a rate that never defers), claimed 8 keys at a time, MaxBatch
// 1, each claim in a transaction rolled back, so that every claim meets
// the same queue. The forms run in turn, one claim each, on one session,
// whose server process's CPU time (/proc/PID/schedstat: the server runs
// on this machine) is read around each claim; the keys are vacuumed
// every 30 turns. It prints the median and lower quartile of each form's
// CPU a claim against the form without a KeyRate, and of forms of the
// rated statement each with one part taken out (not correct claims, a
// measurement of the parts: the second walk, instead; the reads of
// key_rates for rows without T; the INSERT of key_rates, tokens).
// PACER_BENCH_ROUNDS sets the rounds of 30 turns (40).
func TestMeasureRatedClaimStatement(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, enginetest.PostgresURL())
	require.NoError(t, err)
	defer conn.Close(ctx)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "pacer_test_" + hex.EncodeToString(b)
	quoted := pgx.Identifier{schema}.Sanitize()
	defer func() {
		_, err := conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+quoted+" CASCADE")
		require.NoError(t, err)
	}()
	pool, err := pgxpool.New(ctx, enginetest.PostgresURL())
	require.NoError(t, err)
	s, err := New(ctx, pool, Config{Schema: schema})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	pool.Close()
	_, err = conn.Exec(ctx, strings.ReplaceAll(`
		INSERT INTO {s}.keys (queue, key_hash, key, head, tail, ready_at, rate_t, rate_tol)
		SELECT 'q', sha256(('key-' || i)::bytea), ('key-' || i)::bytea, CASE WHEN i % 8 = 0 THEN 39 ELSE 0 END, 40,
			now() - interval '1 hour' + i * interval '1 microsecond', now() - interval '1 hour', '0'
		FROM generate_series(1, 500) AS i;
		INSERT INTO {s}.messages (queue, key_hash, seq, value, added_at)
		SELECT 'q', sha256(('key-' || i)::bytea), n, '"0123456789abcd"'::bytea, now() - interval '1 hour'
		FROM generate_series(1, 500) AS i, generate_series(0, 39) AS n`, "{s}", quoted))
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "VACUUM ANALYZE "+quoted+".keys, "+quoted+".messages, "+quoted+".key_rates")
	require.NoError(t, err)

	q := newQueries(quoted)
	forms := []measuredClaim{
		{"without KeyRate", q.claim},
		{"KeyRate", q.claimRated},
		{"KeyRate without instead", withoutInstead(q.claimRated)},
		{"KeyRate without key_rates reads", withoutRateReads(q.claimRated)},
		{"KeyRate without tokens", withoutTokens(q.claimRated)},
	}
	measureClaimStatements(t, ctx, conn, forms, benchRounds(40), "VACUUM "+quoted+".keys, "+quoted+".key_rates",
		func(tx pgx.Tx, sql string) (pgx.Rows, error) {
			args := []any{"q", int64(1), interval(time.Minute), []byte("h")}
			if strings.Contains(sql, "$6") {
				args = append(args, interval(time.Microsecond), interval(0))
			}
			return tx.Query(ctx, strings.ReplaceAll(sql, "{keys}", "8"), args...)
		})
}

// withoutInstead is the rated claim statement sql without its second walk.
func withoutInstead(sql string) string {
	start := strings.Index(sql, "), instead AS MATERIALIZED (")
	end := strings.Index(sql, "), picked AS MATERIALIZED (")
	sql = sql[:start] + sql[end:]
	return mustReplace(sql, "\tUNION ALL\n\tSELECT queue, key_hash, ready_at, NULL FROM instead\n", "")
}

// withoutTokens is the rated claim statement sql without its write of
// key_rates.
func withoutTokens(sql string) string {
	start := strings.Index(sql, "), tokens AS (")
	end := strings.Index(sql, "), leases AS (")
	return sql[:start] + sql[end:]
}

// withoutRateReads is the rated claim statement sql with NULL for each
// read of key_rates.
func withoutRateReads(sql string) string {
	for {
		start := strings.Index(sql, "(SELECT kr.t FROM")
		if start < 0 {
			return sql
		}
		eq := strings.Index(sql[start:], "kr.key_hash = ") + start
		end := strings.Index(sql[eq:], ")") + eq + 1
		sql = sql[:start] + "NULL::timestamptz" + sql[end:]
	}
}
