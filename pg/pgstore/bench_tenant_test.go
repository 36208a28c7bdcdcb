package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/pg/pgrate"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
)

// The cost of a Claim with tenants does not grow with the tenants or the
// keys: a Claim of one key from a queue of 10^5 keys over 10^3 tenants
// against one from a queue of 10 keys of one tenant, and one without
// tenants, in alternating rounds of 64 Claims, each lease acked and its
// value added back (untimed). The target is a ratio of at most 1.5.
func TestMeasureTenantClaimCost(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	measureTenantClaims(t, newStore(t, connect(t, appName(t))))
}

// measureTenantClaims fills three queues of s and prints the Claim costs.
func measureTenantClaims(t *testing.T, s store.Store) {
	ctx := context.Background()
	val := [][]byte{[]byte(`{"user":42}`)}
	tenantOf := map[string]string{}
	fill := func(q string, keys, tenants int) {
		var next atomic.Int64
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range 16 {
			wg.Go(func() {
				for k := next.Add(1) - 1; k < int64(keys); k = next.Add(1) - 1 {
					key := fmt.Sprint("k", k)
					p := store.AddParams{}
					if tenants > 0 {
						p.Tenant = fmt.Sprint("t", k%int64(tenants))
						mu.Lock()
						tenantOf[q+key] = p.Tenant
						mu.Unlock()
					}
					if err := s.Add(ctx, q, key, val, p); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		_, err := s.Stats(ctx, q) // an engine may fold its Adds here
		require.NoError(t, err)
	}
	t0 := time.Now()
	fill("big", 100000, 1000)
	fill("small", 10, 1)
	fill("plain", 10, 0)
	fmt.Printf("queues filled in %v\n", time.Since(t0).Round(time.Millisecond))
	claim := func(q string) time.Duration {
		t0 := time.Now()
		ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 1, TTL: time.Minute})
		took := time.Since(t0)
		require.NoError(t, err)
		require.Len(t, ls, 1)
		_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
		require.NoError(t, err)
		require.NoError(t, s.Add(ctx, q, ls[0].Key, ls[0].Values, store.AddParams{Tenant: tenantOf[q+ls[0].Key]}))
		return took
	}
	for range 3 {
		var big, small, plain time.Duration
		for range 20 {
			for range 64 {
				plain += claim("plain")
			}
			for range 64 {
				small += claim("small")
			}
			for range 64 {
				big += claim("big")
			}
		}
		n := time.Duration(20 * 64)
		fmt.Printf("claim: 10^5 keys over 10^3 tenants %v, 10 keys of 1 tenant %v (ratio %.2f), 10 keys without tenants %v\n",
			big/n, small/n, float64(big)/float64(small), plain/n)
	}
}

// measureTenantThroughput times a Runner in strict order (MaxBatch 1, 8
// workers, a handler that does nothing) through 500 keys of 10 values
// each, without tenants, with tenants (50 of them), and without tenants
// but with a per-key limit generous enough never to defer a batch (a
// pgrate.Keyed, then a ratelimit.Keyed in the process), in
// PACER_BENCH_ROUNDS (5) alternating rounds on queues of
// their own; open returns a fresh store for a round, keyed a fresh
// per-key limit. cpu, if not nil, returns the CPU time used so far by
// the test process and the database sessions of its pool, which a round
// reports per value: on a loaded machine a steadier figure than the wall
// time. PACER_BENCH_MODES, a list of "tenants", "keylimit" and
// "keylimit-local" separated by commas, runs those only, with the run
// without them.
func measureTenantThroughput(t *testing.T, open func() store.Store, keyed func() ratelimit.KeyGate[string], cpu func() time.Duration) {
	const keys, per = 500, 10
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	only := os.Getenv("PACER_BENCH_MODES") // runs off and these only, if set
	type result struct{ wall, cpu time.Duration }
	run := func(round int, mode string) result {
		s := open()
		q := fmt.Sprint("thr", round, mode)
		var left atomic.Int64
		left.Store(keys * per)
		done := make(chan struct{})
		cfg := pacer.Config[string, int]{Store: s, Name: q, MaxBatch: 1, Workers: 8}
		switch mode {
		case "tenants":
			cfg.Tenant = func(k string) string { return "t" + k[len(k)-2:] }
		case "keylimit":
			cfg.KeyLimit = keyed()
		case "keylimit-local":
			k, err := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{Rate: 1e6, Burst: 1000})
			require.NoError(t, err)
			cfg.KeyLimit = k
		}
		r, err := pacer.New(cfg, func(context.Context, string, []int) error {
			if left.Add(-1) == 0 {
				close(done)
			}
			return nil
		})
		require.NoError(t, err)
		ctx := context.Background()
		for v := range per {
			for k := range keys {
				require.NoError(t, r.Add(ctx, fmt.Sprintf("k%03d", k), v))
			}
		}
		if st, err := s.Stats(ctx, q); err == nil { // an engine may fold its Adds here
			require.Equal(t, keys*per, st.Values)
		}
		var c0 time.Duration
		if cpu != nil {
			c0 = cpu()
		}
		t0 := time.Now()
		go r.Run(ctx)
		<-done
		res := result{wall: time.Since(t0)}
		if cpu != nil {
			res.cpu = cpu() - c0
		}
		if mode == "keylimit" || mode == "keylimit-local" {
			st, err := r.Stats(ctx)
			require.NoError(t, err)
			require.Zero(t, st.KeyLimited, "the per-key limit deferred a batch")
		}
		require.NoError(t, r.Shutdown(ctx))
		return res
	}
	perValue := func(d time.Duration) time.Duration { return d / (keys * per) }
	for round := range rounds {
		off := run(round, "off")
		fmt.Printf("strict end-to-end, %d values over %d keys: without tenants %v (%.0f/s)", keys*per, keys, off.wall.Round(time.Millisecond), keys*per/off.wall.Seconds())
		cpus := ""
		for _, m := range []struct{ mode, what string }{{"tenants", "with 50 tenants"}, {"keylimit", "per-key limit"}, {"keylimit-local", "in-process per-key limit"}} {
			if only != "" && !slices.Contains(strings.Split(only, ","), m.mode) {
				continue
			}
			res := run(round, m.mode)
			fmt.Printf("; %s %v (%.0f/s): %+.1f%%", m.what, res.wall.Round(time.Millisecond), keys*per/res.wall.Seconds(), 100*(off.wall.Seconds()/res.wall.Seconds()-1))
			cpus += fmt.Sprintf(", %s %v (%.2fx)", m.what, perValue(res.cpu), float64(res.cpu)/float64(off.cpu))
		}
		fmt.Println()
		if cpu != nil {
			fmt.Printf("  CPU per value (test process and its database sessions): without tenants %v%s\n", perValue(off.cpu), cpus)
		}
	}
}

// Throughput with tenants: see measureTenantThroughput.
func TestMeasureTenantThroughput(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	app := appName(t)
	pool := connect(t, app)
	// The per-key limit has a pool of its own, of the same sessions'
	// name, that counts its statements.
	cfg := pool.Config()
	counter := &statementCounter{contains: "rate_tr"}
	cfg.ConnConfig.Tracer = counter
	var takes atomic.Int64
	keyedPool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(keyedPool.Close)
	keyed := func() ratelimit.KeyGate[string] {
		k, err := pgrate.NewKeyed(context.Background(), keyedPool, pgrate.KeyedConfig{
			Rate: pgrate.MaxRate, Burst: 1000, Name: fmt.Sprint("bench", time.Now().UnixNano()), Schema: freshSchema(t, pool)})
		require.NoError(t, err)
		return countingGate{k, &takes}
	}
	measureTenantThroughput(t, func() store.Store { return newStore(t, pool) }, keyed, func() time.Duration {
		return processCPU(t) + sessionsCPU(t, pool, app)
	})
	fmt.Printf("per-key limit: %d TakeKey calls, %d statements of rate_try or rate_tries: %.3f a call\n",
		takes.Load(), counter.n.Load(), float64(counter.n.Load())/float64(takes.Load()))
}

// processCPU returns the CPU time, user and system, of the test process.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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

// countingGate counts the TakeKey calls of its KeyGate.
type countingGate struct {
	ratelimit.KeyGate[string]
	n *atomic.Int64
}

func (g countingGate) TakeKey(ctx context.Context, key string) (time.Duration, error) {
	g.n.Add(1)
	return g.KeyGate.TakeKey(ctx, key)
}
