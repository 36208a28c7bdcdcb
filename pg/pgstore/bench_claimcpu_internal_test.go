//go:build linux

package pgstore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// A measuredClaim is a form of a claim statement that
// measureClaimStatements runs, by its name.
type measuredClaim struct{ name, sql string }

// measureClaimStatements measures the server CPU a claim of each form
// costs, against the first's: the forms run in turn, one claim each, in
// transactions rolled back, so that every claim meets the same queue, on
// conn, whose server process's CPU time (/proc/PID/schedstat: the server
// runs on this machine) is read around each claim (claim: the statements
// it runs in tx, which must lease 8 keys); vacuum (a VACUUM statement)
// runs every 30 turns, rounds times. It logs the median and lower
// quartile of each form's CPU a claim and their difference to the first
// form's.
func measureClaimStatements(t *testing.T, ctx context.Context, conn *pgx.Conn, forms []measuredClaim, rounds int, vacuum string, claim func(tx pgx.Tx, sql string) (pgx.Rows, error)) {
	cpu := serverCPU(t, ctx, conn)
	once := func(sql string) time.Duration {
		tx, err := conn.Begin(ctx)
		require.NoError(t, err)
		defer func() { require.NoError(t, tx.Rollback(ctx)) }()
		before := cpu()
		rows, err := claim(tx, sql)
		require.NoError(t, err)
		n := 0
		for rows.Next() {
			n++
		}
		require.NoError(t, rows.Err())
		require.Equal(t, 8, n, "leases a claim")
		return cpu() - before
	}
	for _, f := range forms { // past the custom plans, to the generic one
		for range 10 {
			once(f.sql)
		}
	}
	took := make([][]float64, len(forms))
	for range rounds {
		for range 30 {
			for i, f := range forms {
				took[i] = append(took[i], float64(once(f.sql).Nanoseconds())/1e3)
			}
		}
		_, err := conn.Exec(ctx, vacuum)
		require.NoError(t, err)
	}
	base := slices.Sorted(slices.Values(took[0]))
	for i, f := range forms {
		d := slices.Sorted(slices.Values(took[i]))
		med, q1 := d[len(d)/2], d[len(d)/4]
		t.Logf("%-34s server CPU a claim: median %6.1f us (%+6.1f), lower quartile %6.1f us (%+6.1f)",
			f.name, med, med-base[len(base)/2], q1, q1-base[len(base)/4])
	}
}

// benchRounds is PACER_BENCH_ROUNDS, or def if it is not a positive
// number.
func benchRounds(def int) int {
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return def
}

// serverCPU returns a reader of the CPU time of the server process of
// the session that q runs its statements on (/proc/PID/schedstat: the
// server runs on this machine).
func serverCPU(tb testing.TB, ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) func() time.Duration {
	var pid int
	require.NoError(tb, q.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid))
	return func() time.Duration {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
		require.NoError(tb, err, "the server's process (is the server on this machine?)")
		n, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		require.NoError(tb, err)
		return time.Duration(n)
	}
}
