package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store/storetest"
)

// throughputChild is set in the environment of the processes that
// TestMeasureThroughput starts: "schema queue".
const throughputChild = "PACER_PG_THROUGHPUT_CHILD"

// End-to-end throughput: 20,000 values over 1,000 keys, 20 each, stored
// (with COPY, as BenchmarkThroughput does), then handled by 2 OS
// processes (this test binary, run again) of one Runner with 4 workers
// each and a no-op handler, in strict mode (MaxBatch 1: one call per
// value). The time runs from the go signal, which the processes get once
// they are connected and waiting, until the store is empty.
// PACER_BENCH_ROUNDS sets the number of rounds (3 by default).
func TestMeasureThroughput(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	const keys, per = 1000, 20
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	pool := connect(t, appName(t))
	ctx := t.Context()
	app := appName(t) + "-child"
	for round := range rounds {
		schema := freshSchema(t, pool)
		s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
		require.NoError(t, err)
		backlog(t, pool, schema, "q", keys, per)
		var procs []*storetest.Process
		for range 2 {
			procs = append(procs, storetest.StartProcess(t, "TestThroughputChild", throughputChild, schema, "q", app))
		}
		serial, parallel := select1Floor(t, pool)
		t0 := time.Now()
		for _, p := range procs {
			p.Go(t)
		}
		// A cheap look, not Stats, which visits every key: the server's
		// CPU is what is measured.
		empty := "SELECT NOT EXISTS (SELECT 1 FROM " + pgx.Identifier{schema, "keys"}.Sanitize() + " WHERE queue = 'q')"
		for done := false; !done; {
			require.NoError(t, pool.QueryRow(ctx, empty).Scan(&done))
			time.Sleep(2 * time.Millisecond)
		}
		took := time.Since(t0)
		server := sessionsCPU(t, pool, app)
		handled := 0
		var client time.Duration
		for _, p := range procs {
			n, cpu := p.Stop(t)
			handled += n
			client += cpu
		}
		require.NoError(t, s.Close())
		require.Equal(t, keys*per, handled, "every value handled once")
		rate := keys * per / took.Seconds()
		fmt.Printf("throughput strict round %d: %d values in %v: %.0f values/s; CPU per value: server %v, clients %v; "+
			"SELECT 1 floor %.0f/s serial (ratio %.2f), %.0f/s 8-parallel (ratio %.2f)\n",
			round, keys*per, took.Round(time.Millisecond), rate,
			(server / (keys * per)).Round(time.Microsecond), (client / (keys * per)).Round(time.Microsecond),
			serial, rate/serial, parallel, rate/parallel)
	}
}

// TestThroughputChild is one process of TestMeasureThroughput: a Runner
// with 4 workers, in strict mode, and a no-op handler
// (storetest.ServeThroughput).
func TestThroughputChild(t *testing.T) {
	f := storetest.ProcessArgs(t, throughputChild)
	schema, q, app := f[0], f[1], f[2]
	s, err := pgstore.New(context.Background(), connect(t, app), pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	storetest.ServeThroughput[string](t, s, q, 1)
}

// sessionsCPU returns the CPU time, user and system, of the server
// processes of the sessions named app, read from /proc: the server runs
// on this machine. A session that ended meanwhile drops out, so a round
// compares readings of the same sessions (the pool keeps its own).
func sessionsCPU(t *testing.T, pool *pgxpool.Pool, app string) time.Duration {
	rows, err := pool.Query(context.Background(), "SELECT pid FROM pg_stat_activity WHERE application_name = $1", app)
	require.NoError(t, err)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(t, err)
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue // not on this machine, or gone
		}
		// The fields after the command's closing parenthesis: utime and
		// stime are the 12th and 13th.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}

// select1Floor returns how many SELECT 1 round trips pool makes a second,
// one after the other and from 8 goroutines at once: the floor that the
// measurement is compared with, taken in the same run.
func select1Floor(t *testing.T, pool *pgxpool.Pool) (serial, parallel float64) {
	const n = 2000
	run := func(goroutines int) float64 {
		var wg sync.WaitGroup
		t0 := time.Now()
		for range goroutines {
			wg.Go(func() {
				var one int
				for range n / goroutines {
					if err := pool.QueryRow(t.Context(), "SELECT 1").Scan(&one); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return n / time.Since(t0).Seconds()
	}
	return run(1), run(8)
}
