//go:build unix

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
// each, without tenants, with tenants (100 of them: a key's last two
// digits), and without tenants but with a per-key limit generous enough
// never to defer a batch (a pgrate.Keyed, then a ratelimit.Keyed in the
// process, then Config.KeyRate of 1µs and a burst of 1, which the claims
// keep); and with MaxBatch 2, PerKey 1 and PerKey 2 (several leases of
// a key need batches of more than one value). PACER_BENCH_ROUNDS (5)
// alternating rounds, the order of the modes turned by one each round,
// each run on
// a queue of its own; open returns a fresh store for a run, keyed a fresh
// per-key limit. cpu returns the CPU time used so far by the test process
// and the database sessions of its pool, which a run reports per value:
// on a loaded machine a steadier figure than the wall time; trips counts
// the pool's round trips and statements, which a run reports per value
// too. PACER_BENCH_MODES, a list of "tenants", "keylimit",
// "keylimit-local", "keyrate", "maxbatch2" and "perkey2" separated by commas, runs
// those only, with the run they are compared with.
func measureTenantThroughput(t *testing.T, open func() store.Store, keyed func() ratelimit.KeyGate[string], cpu func() time.Duration, trips *pgTrips) {
	const keys, per = 500, 10
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	only := os.Getenv("PACER_BENCH_MODES") // runs these only, if set
	type result struct {
		wall, cpu         time.Duration
		trips, statements float64
	}
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
		case "maxbatch2":
			cfg.MaxBatch = 2
		case "perkey2":
			cfg.MaxBatch, cfg.PerKey = 2, 2
		case "keyrate":
			cfg.KeyRate = neverDefers
		}
		r, err := pacer.New(cfg, func(_ context.Context, _ string, vals []int) error {
			if left.Add(-int64(len(vals))) == 0 {
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
		c0 := cpu()
		trips.reset()
		t0 := time.Now()
		go r.Run(ctx)
		<-done
		res := result{wall: time.Since(t0)}
		res.cpu = cpu() - c0
		res.trips, res.statements = trips.total(), trips.statementCount()
		trips.off()
		if mode == "keylimit" || mode == "keylimit-local" {
			st, err := r.Stats(ctx)
			require.NoError(t, err)
			require.Zero(t, st.KeyLimited, "the per-key limit deferred a batch")
		}
		require.NoError(t, r.Shutdown(ctx))
		return res
	}
	perValue := func(d time.Duration) time.Duration { return d / (keys * per) }
	show := func(name string, r, base result) {
		fmt.Printf("  %-14s %v (%.0f/s, %+.1f%%), CPU %v a value (%.2fx), %.3f round trips and %.3f statements a value (%.2fx)\n",
			name, r.wall.Round(time.Millisecond), keys*per/r.wall.Seconds(), 100*(base.wall.Seconds()/r.wall.Seconds()-1),
			perValue(r.cpu), float64(r.cpu)/float64(base.cpu), r.trips/(keys*per), r.statements/(keys*per), r.statements/base.statements)
	}
	for round := range rounds {
		fmt.Printf("strict end-to-end, round %d, %d values over %d keys; CPU is the test process's and its database sessions'; each against the line above it in brackets:\n", round, keys*per, keys)
		want := func(mode string) bool { return only == "" || slices.Contains(strings.Split(only, ","), mode) }
		off := run(round, "off")
		show("without", off, off)
		// Each round starts one mode later, so that no mode always runs
		// after the same one.
		modes := []string{"tenants", "keylimit", "keylimit-local", "keyrate"}
		i := round % len(modes)
		for _, mode := range slices.Concat(modes[i:], modes[:i]) {
			if want(mode) {
				show(mode, run(round, mode), off)
			}
		}
		if want("maxbatch2") || want("perkey2") {
			mb := run(round, "maxbatch2")
			show("maxbatch2", mb, mb)
			show("perkey2", run(round, "perkey2"), mb)
		}
	}
}

// Throughput with tenants: see measureTenantThroughput.
func TestMeasureTenantThroughput(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	app := appName(t)
	trips := newPGTrips()
	pool := connectWith(t, app, func(cfg *pgxpool.Config) { cfg.ConnConfig.Tracer = trips })
	// The per-key limit has a pool of its own, of the same sessions'
	// name, that counts its statements apart from the store's.
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
	}, trips)
	if n := takes.Load(); n > 0 {
		fmt.Printf("per-key limit: %d TakeKey calls, %d statements of rate_try or rate_tries: %.3f a call\n",
			n, counter.n.Load(), float64(counter.n.Load())/float64(n))
	}
}

// processCPU returns the CPU time, user and system, of the test process.
func processCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
