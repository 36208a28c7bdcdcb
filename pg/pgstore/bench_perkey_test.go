//go:build unix

package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/pg/pgstore"
)

// TestMeasurePerKeyFlights breaks down where a value's time goes with
// PerKey 2 against PerKey 1, both MaxBatch 2, on a server of the test's
// own with pg_stat_statements (the statements inside the functions
// tracked too, and their planning): 500 keys of 10 values, stored with
// COPY, worked by one Runner of 8 workers with a no-op handler, the two
// modes in alternating rounds (PACER_BENCH_ROUNDS, 3), each on a schema
// of its own. Per value, each run prints values/s, the CPU of the
// server's processes and of this process, the round trips and statements
// the client sent, the WAL the server wrote, and the rows written to keys
// and lanes (HOT or not); the last round prints the statements, each
// with its calls and plans, its time planning and running a call (a
// function's time holds its statements' and their executor start-up,
// which a statement's own time leaves out), and its buffers hit and WAL
// records a call.
//
// PACER_BENCH_WARM=1 runs each mode once untimed on its schema first, so
// that the sessions have planned its statements; PACER_BENCH_PERKEY=n
// runs PerKey n alone; PACER_BENCH_EXPLAIN=file writes there the server's
// log, with the plans of a sample of the statements as they ran
// (auto_explain).
func TestMeasurePerKeyFlights(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	const keys, per = 500, 10
	settings := []string{"shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all",
		"pg_stat_statements.track_planning=on", "max_connections=60"}
	logTo := os.Getenv("PACER_BENCH_EXPLAIN") // a file for the plans of a sample of the statements
	if logTo != "" {
		settings = append(settings, "shared_preload_libraries=pg_stat_statements,auto_explain", "auto_explain.log_min_duration=0",
			"auto_explain.log_analyze=on", "auto_explain.log_buffers=on", "auto_explain.log_wal=on",
			"auto_explain.log_nested_statements=on", "auto_explain.sample_rate=0.03")
	}
	srv := startPGServer(t, settings...)
	if logTo != "" {
		t.Cleanup(func() {
			b, err := os.ReadFile(srv.log)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(logTo, b, 0o644))
		})
	}
	ctx := t.Context()
	trips := newPGTrips()
	cfg, err := pgxpool.ParseConfig(srv.url())
	require.NoError(t, err)
	cfg.MaxConns = 16
	cfg.ConnConfig.Tracer = trips
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = pool.Exec(ctx, "CREATE EXTENSION pg_stat_statements")
	require.NoError(t, err)
	type tableWrites struct{ ins, upd, hot, del int64 }
	writes := func(schema, table string) (w tableWrites) {
		require.NoError(t, pool.QueryRow(ctx, `SELECT n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables
			WHERE schemaname = $1 AND relname = $2`, schema, table).Scan(&w.ins, &w.upd, &w.hot, &w.del))
		return w
	}
	wal := func() (records, bytes int64) {
		require.NoError(t, pool.QueryRow(ctx, "SELECT wal_records, wal_bytes::bigint FROM pg_stat_wal").Scan(&records, &bytes))
		return records, bytes
	}
	v := func(n int64) float64 { return float64(n) / (keys * per) }
	warm := os.Getenv("PACER_BENCH_WARM") == "1"
	run := func(perKey int, breakdown bool) {
		schema := freshSchema(t, pool)
		s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
		require.NoError(t, err)
		defer s.Close()
		backlog(t, pool, schema, "q", keys, per)
		if warm {
			// A first run, untimed, has the sessions plan the statements.
			r, err := pacer.New(pacer.Config[string, string]{Store: s, Name: "q", Workers: 8, MaxBatch: 2, PerKey: perKey},
				func(context.Context, string, []string) error { return nil })
			require.NoError(t, err)
			go func() { _ = r.Run(ctx) }()
			for {
				st, err := s.Stats(ctx, "q")
				require.NoError(t, err)
				if st.Values == 0 {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			require.NoError(t, r.Shutdown(ctx))
			backlog(t, pool, schema, "q", keys, per)
		}
		var left atomic.Int64
		left.Store(keys * per)
		done := make(chan struct{})
		r, err := pacer.New(pacer.Config[string, string]{Store: s, Name: "q", Workers: 8, MaxBatch: 2, PerKey: perKey},
			func(_ context.Context, _ string, vals []string) error {
				if left.Add(-int64(len(vals))) == 0 {
					close(done)
				}
				return nil
			})
		require.NoError(t, err)
		_, err = pool.Exec(ctx, "SELECT pg_stat_statements_reset()")
		require.NoError(t, err)
		_, err = pool.Exec(ctx, "SELECT pg_stat_reset_shared('wal')")
		require.NoError(t, err)
		flushStats(t, pool)
		time.Sleep(statsFlush)
		k0, l0 := writes(schema, "keys"), writes(schema, "lanes")
		wr0, wb0 := wal()
		trips.reset()
		server0, proc0 := serverCPU(t, srv), processCPU(t)
		t0 := time.Now()
		go func() { _ = r.Run(ctx) }()
		select {
		case <-done:
		case <-time.After(5 * time.Minute):
			t.Fatal("the run did not end in 5 minutes")
		}
		took := time.Since(t0)
		server, proc := serverCPU(t, srv)-server0, processCPU(t)-proc0
		require.NoError(t, r.Shutdown(ctx))
		trips.off()
		time.Sleep(statsFlush)
		flushStats(t, pool)
		time.Sleep(statsFlush)
		k, l := writes(schema, "keys"), writes(schema, "lanes")
		wr, wb := wal()
		fmt.Printf("PerKey %d: %.0f values/s; per value: CPU µs server %.1f, this process %.1f; %.3f round trips, %.3f statements sent; WAL %.2f records, %.0f bytes; keys: %.3f inserted, %.3f updated (%.3f HOT), %.3f deleted; lanes: %.3f inserted, %.3f updated (%.3f HOT), %.3f deleted\n",
			perKey, keys*per/took.Seconds(), float64(server.Nanoseconds())/1e3/(keys*per), float64(proc.Nanoseconds())/1e3/(keys*per),
			trips.total()/(keys*per), trips.statementCount()/(keys*per), v(wr-wr0), v(wb-wb0),
			v(k.ins-k0.ins), v(k.upd-k0.upd), v(k.hot-k0.hot), v(k.del-k0.del),
			v(l.ins-l0.ins), v(l.upd-l0.upd), v(l.hot-l0.hot), v(l.del-l0.del))
		if breakdown {
			rows, err := pool.Query(ctx, `SELECT calls, plans, total_plan_time, total_exec_time, shared_blks_hit, wal_records, query
				FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat%' AND calls >= $1 ORDER BY total_exec_time DESC`, keys*per/1000)
			require.NoError(t, err)
			for rows.Next() {
				var calls, plans, hits, walRecords int64
				var planMS, execMS float64
				var q string
				require.NoError(t, rows.Scan(&calls, &plans, &planMS, &execMS, &hits, &walRecords, &q))
				c := float64(calls)
				fmt.Printf("    %.4f calls a value, %d plans; µs a call: planning %.1f, running %.1f; a call: %.1f buffers hit, %.1f WAL records  %s\n",
					c/(keys*per), plans, planMS*1e3/c, execMS*1e3/c, float64(hits)/c, float64(walRecords)/c, shortSQL(q))
			}
			require.NoError(t, rows.Err())
		}
	}
	for round := range rounds {
		last := round == rounds-1
		if only, err := strconv.Atoi(os.Getenv("PACER_BENCH_PERKEY")); err == nil {
			run(only, last) // one mode alone, as under a profiler
			continue
		}
		if round%2 == 0 {
			run(1, last)
			run(2, last)
		} else {
			run(2, last)
			run(1, last)
		}
	}
}
