//go:build unix

package pgstore_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestMeasureStrictPath measures the strict path end to end, in the
// test's own process, on a server of its own with pg_stat_statements:
// 20,000 values stored over 500 keys (or 20,000) with COPY, then handled
// by one Runner of 8 workers with a no-op handler, MaxBatch 1, timed from
// Run until the handler saw the last value. Each round runs each
// workload next to its floor, SELECT 1 from 8 goroutines on the same pool
// (8 in flight), and prints values/s, SELECT 1s a second and their
// ratio, with the round trips the client made (statements alone and
// batches), the statements and commits the server ran, and the CPU time
// of the server's processes and of this process, per value.
// PACER_BENCH_ROUNDS sets the rounds (3).
//
// PACER_BENCH_KEYRATE=1 runs the first workload only, without and with
// a store.KeyRate of 1µs and a burst of 1 on every claim, in turns.
//
// Then one more run of each workload (of the first PACER_BENCH_PROFILED
// if set), under a CPU and a block profile of this process, breaks a
// value's time down: the statements by text, with the server's time,
// buffers hit and WAL records for each (pg_stat_statements), this
// process's CPU time by part of the code (the Runner, the adapter, the
// store, the codec, pgx), and the time workers wait for each other (for a
// lease handed over, for a shared flight of Acks).
func TestMeasureStrictPath(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	srv := startPGServer(t, "shared_preload_libraries=pg_stat_statements", "max_connections=60")
	ctx := t.Context()
	trips := newPGTrips()
	cfg, err := pgxpool.ParseConfig(srv.url())
	require.NoError(t, err)
	cfg.MaxConns = 16
	cfg.ConnConfig.RuntimeParams["application_name"] = "strict-path"
	cfg.ConnConfig.Tracer = trips
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = pool.Exec(ctx, "CREATE EXTENSION pg_stat_statements")
	require.NoError(t, err)
	run := func(sc storetest.StrictCase, profile bool) {
		schema := freshSchema(t, pool)
		ps, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
		require.NoError(t, err)
		defer ps.Close()
		var s store.Store = ps
		if strings.HasSuffix(sc.Name, keyRateCase) {
			s = keyRated{ps, neverDefers}
		}
		backlog(t, pool, schema, "q", sc.Keys, storetest.StrictValues/sc.Keys)
		var parallel float64
		if !profile {
			_, parallel = select1Floor(t, pool)
		}
		_, err = pool.Exec(ctx, "SELECT pg_stat_statements_reset()")
		require.NoError(t, err)
		flushStats(t, pool)
		trips.reset()
		time.Sleep(statsFlush)
		commits0, server0, proc0 := commits(t, pool), serverCPU(t, srv), storetest.ProcessCPU(t)
		r := storetest.StrictRun{Workers: storetest.StrictWorkers, AckInBackground: sc.Background, Values: storetest.StrictValues}
		var took time.Duration
		var p storetest.Profiled
		if profile {
			p = storetest.ProfileRun(t, "pg-"+strings.ReplaceAll(strings.ReplaceAll(sc.Name, ",", ""), " ", "-"), func() {
				took = storetest.RunStrict[string](t, s, "q", r)
			})
		} else {
			took = storetest.RunStrict[string](t, s, "q", r)
		}
		proc, server := storetest.ProcessCPU(t)-proc0, serverCPU(t, srv)-server0
		trips.off()
		flushes := flushStats(t, pool)
		time.Sleep(statsFlush)
		xacts := commits(t, pool) - commits0 - int64(flushes)
		statements := statementStats(t, pool)
		var left int
		require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "messages"}.Sanitize()).Scan(&left))
		require.Zero(t, left, "values left in the queue")
		rate := storetest.StrictValues / took.Seconds()
		if !profile {
			fmt.Printf("strict path, %s: %.0f values/s, SELECT 1 8 in flight %.0f/s, ratio %.3f; per value: %.3f round trips, %.3f statements, %.3f commits, CPU µs: server %.1f, this process %.1f\n",
				sc.Name, rate, parallel, rate/parallel, perValue(trips.total()), perValue(statements.calls()), perValue(float64(xacts)), micros(server), micros(proc))
			return
		}
		fmt.Printf("\nstrict path, %s, profiled (%v, %.0f values/s under the profiles): per value\n", sc.Name, took.Round(time.Millisecond), rate)
		fmt.Printf("  server: CPU of its processes %.1f µs, %.3f commits, %.3f statements, %.1f µs of their execution and planning (pg_stat_statements), by statement:\n",
			micros(server), perValue(float64(xacts)), perValue(statements.calls()), statements.micros()/storetest.StrictValues)
		for _, st := range statements {
			fmt.Printf("    %.4f calls, %7.1f µs/call, %6.2f µs/value, %6.1f buffers hit/call, %5.1f WAL records/call  %s\n",
				perValue(st.calls), st.ms*1e3/st.calls, st.ms*1e3/storetest.StrictValues, st.hits/st.calls, st.wal/st.calls, st.query)
		}
		trips.print()
		storetest.PrintCPUShares(t, p, storetest.StrictValues, pgCPUShares)
		storetest.PrintWaits(t, p, storetest.StrictValues, storetest.StrictWorkers, took, storetest.Prefixed("github.com/pacerkit/pacer/pg/pgstore.(*Store).board"))
	}
	cases := storetest.StrictCases
	if os.Getenv("PACER_BENCH_KEYRATE") == "1" {
		// The first case without and with a KeyRate, in turns.
		rated := cases[0]
		rated.Name += keyRateCase
		cases = []storetest.StrictCase{cases[0], rated}
	}
	for range rounds {
		for _, sc := range cases {
			run(sc, false)
		}
	}
	profiled := len(storetest.StrictCases)
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_PROFILED")); err == nil {
		profiled = min(n, profiled)
	}
	for _, sc := range cases[:min(profiled, len(cases))] {
		run(sc, true)
	}
}

// keyRateCase ends the name of a strict case whose claims keep a KeyRate
// that defers nothing (PACER_BENCH_KEYRATE=1).
const keyRateCase = ", KeyRate 1µs"

func perValue(n float64) float64 { return n / storetest.StrictValues }

// micros returns d per value, in µs.
func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / storetest.StrictValues }

// pgCPUShares are the parts of the code that a value's CPU time in this
// process is put on.
var pgCPUShares = []storetest.Share{
	{Name: "codec", Has: storetest.IsCodec},
	{Name: "pgx", Has: storetest.Prefixed("github.com/jackc/")},
	{Name: "store (pgstore)", Has: storetest.Prefixed("github.com/pacerkit/pacer/pg/pgstore.")},
	{Name: "adapter (internal/...)", Has: storetest.Prefixed("github.com/pacerkit/pacer/internal/")},
	{Name: "Runner (root package)", Has: storetest.Prefixed("github.com/pacerkit/pacer.")},
	{Name: "test (handler, harness)", Has: storetest.Prefixed("github.com/pacerkit/pacer/store/storetest.", "testing.")},
}

// statsFlush is how long a reading of pg_stat_database waits for the
// backends' counts, after flushStats: an idle backend sends them within a
// second, or at once when asked to.
const statsFlush = 1100 * time.Millisecond

// flushStats has the backend of each idle connection of pool send the
// counts it keeps to the server's statistics as soon as it is idle, and
// returns on how many connections it ran, a commit each. A backend that
// went idle less than a second after it last sent them waits up to 10 s
// before it sends them again: without this, the commits of the SELECT 1s
// that the floor ran before the run come in during the run and are
// counted as its own.
func flushStats(t *testing.T, pool *pgxpool.Pool) int {
	conns := pool.AcquireAllIdle(t.Context())
	for _, c := range conns {
		_, err := c.Exec(t.Context(), "SELECT pg_stat_force_next_flush()")
		c.Release()
		require.NoError(t, err)
	}
	return len(conns)
}

// commits returns the transactions committed in the pool's database so
// far, as the backends reported them.
func commits(t *testing.T, pool *pgxpool.Pool) int64 {
	var n int64
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&n))
	return n
}

// serverCPU returns the CPU time that srv's processes (the postmaster and
// its children) used so far, read from /proc: the children alive now, and
// those that exited, which the postmaster reaped and so counts in its own
// children's times (cutime and cstime). Without the latter a backend or an
// autovacuum worker that exits between two readings takes its time out of
// the second, which may then come out below the first. A child reaped
// while the children are read would count twice or not at all, so the
// reading is made again until the postmaster's count of its reaped
// children stayed the same across it.
func serverCPU(t *testing.T, srv *pgServer) time.Duration {
	root := srv.cmd.Process.Pid
	for {
		reaped, ok := procTimes(root)
		require.True(t, ok, "the server's process is gone")
		ticks := reaped[0] + reaped[1] + reaped[2] + reaped[3]
		stats, err := filepath.Glob("/proc/[0-9]*/stat")
		require.NoError(t, err)
		for _, path := range stats {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(path)))
			if pid == root {
				continue
			}
			b, err := os.ReadFile(path)
			if err != nil {
				continue // it ended meanwhile, and its parent counts it
			}
			f := statFields(b)
			if ppid, _ := strconv.Atoi(f[1]); ppid != root {
				continue
			}
			for _, i := range []int{11, 12} {
				n, _ := strconv.ParseInt(f[i], 10, 64)
				ticks += n
			}
		}
		if again, ok := procTimes(root); ok && again[2] == reaped[2] && again[3] == reaped[3] {
			return time.Duration(ticks) * (time.Second / 100) // USER_HZ
		}
	}
}

// procTimes returns a process's utime, stime, cutime and cstime, in
// ticks, and false if it is gone.
func procTimes(pid int) ([4]int64, bool) {
	var out [4]int64
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return out, false
	}
	f := statFields(b)
	for i := range out {
		out[i], _ = strconv.ParseInt(f[11+i], 10, 64)
	}
	return out, true
}

// statFields returns the fields of a /proc/<pid>/stat after the command's
// closing parenthesis: the parent is the 2nd; utime, stime, cutime and
// cstime the 12th to 15th.
func statFields(b []byte) []string {
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
}

// A statementStat is one statement's line of pg_stat_statements.
type statementStat struct {
	query string
	calls float64
	ms    float64 // of execution and planning
	hits  float64 // shared buffers hit
	wal   float64 // WAL records written
}

type statementTable []statementStat

// statementStats returns the statements of pg_stat_statements but its
// own and the test's readings, the most time first.
func statementStats(t *testing.T, pool *pgxpool.Pool) statementTable {
	rows, err := pool.Query(t.Context(), `SELECT query, calls, total_exec_time + total_plan_time, shared_blks_hit, wal_records FROM pg_stat_statements
		WHERE query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%pg_stat_database%'
			AND query NOT LIKE '%pg_stat_force_next_flush%' ORDER BY 3 DESC`)
	require.NoError(t, err)
	var out statementTable
	for rows.Next() {
		var st statementStat
		var calls, hits, wal int64
		require.NoError(t, rows.Scan(&st.query, &calls, &st.ms, &hits, &wal))
		st.calls, st.hits, st.wal = float64(calls), float64(hits), float64(wal)
		st.query = shortSQL(st.query)
		out = append(out, st)
	}
	require.NoError(t, rows.Err())
	return out
}

func (ss statementTable) calls() (n float64) {
	for _, s := range ss {
		n += s.calls
	}
	return n
}

func (ss statementTable) micros() (n float64) {
	for _, s := range ss {
		n += s.ms * 1e3
	}
	return n
}

// shortSQL is the start of q, its spaces folded.
func shortSQL(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) > 110 {
		q = q[:110] + "..."
	}
	return q
}

// pgTrips counts what a pool sends: each statement sent alone is a round
// trip, as is each batch. It counts statements by their text as sent, and
// shortens the texts only to print them: a tracer runs on the path it
// measures, and a flight's leader would fold several kilobytes of text
// for each statement it sends.
type pgTrips struct {
	mu      sync.Mutex
	alone   map[string]int // statements sent alone, by text
	batched map[string]int // statements sent in batches, by text
	batches int
	stopped bool // counts nothing until reset
}

func newPGTrips() *pgTrips { return &pgTrips{alone: map[string]int{}, batched: map[string]int{}} }

func (p *pgTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	p.mu.Lock()
	if !p.stopped {
		p.alone[d.SQL]++
	}
	p.mu.Unlock()
	return ctx
}

func (p *pgTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (p *pgTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	p.mu.Lock()
	if !p.stopped {
		p.batches++
	}
	p.mu.Unlock()
	return ctx
}

func (p *pgTrips) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	p.mu.Lock()
	if !p.stopped {
		p.batched[d.SQL]++
	}
	p.mu.Unlock()
}

func (p *pgTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (p *pgTrips) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.alone, p.batched, p.batches, p.stopped = map[string]int{}, map[string]int{}, 0, false
}

// off stops the counting until reset.
func (p *pgTrips) off() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
}

func (p *pgTrips) total() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count()
}

// statementCount returns the statements counted, alone and batched.
func (p *pgTrips) statementCount() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, calls := range p.alone {
		n += calls
	}
	for _, calls := range p.batched {
		n += calls
	}
	return float64(n)
}

// count returns the round trips counted, under p.mu.
func (p *pgTrips) count() float64 {
	n := p.batches
	for _, calls := range p.alone {
		n += calls
	}
	return float64(n)
}

func (p *pgTrips) print() {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Printf("  client: %.3f round trips (%.3f batches), by statement:\n", perValue(p.count()), perValue(float64(p.batches)))
	statements := map[string]int{}
	for q, calls := range p.alone {
		statements[shortSQL(q)] += calls
	}
	for q, calls := range p.batched {
		statements["(batched) "+shortSQL(q)] += calls
	}
	qs := make([]string, 0, len(statements))
	for q := range statements {
		qs = append(qs, q)
	}
	slices.SortFunc(qs, func(a, b string) int { return statements[b] - statements[a] })
	for _, q := range qs {
		fmt.Printf("    %.4f  %s\n", perValue(float64(statements[q])), q)
	}
}

// keyRated is a Store whose Claims and FinishAndClaims keep rate, for the
// strict runs, whose Runner has no Config.KeyRate.
type keyRated struct {
	*pgstore.Store
	rate store.KeyRate
}

func (s keyRated) Claim(ctx context.Context, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	p.KeyRate = s.rate
	return s.Store.Claim(ctx, queue, p)
}

func (s keyRated) FinishAndClaim(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) (bool, []store.Lease, time.Duration, error) {
	p.KeyRate = s.rate
	return s.Store.FinishAndClaim(ctx, l, o, p)
}
