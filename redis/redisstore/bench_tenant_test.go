package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// The cost of a Claim with tenants does not grow with the tenants or the
// keys: a Claim of one key from a queue of 10^5 keys over 10^3 tenants
// against one from a queue of 10 keys of one tenant, and one without
// tenants, in alternating rounds of 64 Claims, each lease acked and its
// value added back (untimed). The target is a ratio of at most 1.5.
func TestMeasureTenantClaimCost(t *testing.T) {
	benchOnly(t)
	c := benchClient(t, redistest.StartServer(t).Addr())
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "tenants"})
	require.NoError(t, err)
	defer s.Close()
	measureTenantClaims(t, s)
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
					assertNoError(t, s.Add(ctx, q, key, val, p))
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
// each, with and without tenants (100 of them: a key's last two
// digits), in PACER_BENCH_ROUNDS (5) alternating rounds on queues of
// their own; open returns a fresh store for a round.
func measureTenantThroughput(t *testing.T, open func() store.Store) {
	const keys, per = 500, 10
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	run := func(round int, tenants bool) time.Duration {
		s := open()
		q := fmt.Sprint("thr", round, tenants)
		cfg := pacer.Config[string, int]{Store: s, Name: q, MaxBatch: 1, Workers: 8}
		if tenants {
			cfg.Tenant = func(k string) string { return "t" + k[len(k)-2:] }
		}
		r, done := flowRunner(t, cfg, keys, per)
		ctx := context.Background()
		t0 := time.Now()
		go r.Run(ctx)
		<-done
		took := time.Since(t0)
		require.NoError(t, r.Shutdown(ctx))
		return took
	}
	for round := range rounds {
		off, on := run(round, false), run(round, true)
		fmt.Printf("strict end-to-end, %d values over %d keys: without tenants %v (%.0f/s), with 100 tenants %v (%.0f/s): %+.1f%%\n",
			keys*per, keys, off.Round(time.Millisecond), keys*per/off.Seconds(), on.Round(time.Millisecond), keys*per/on.Seconds(),
			100*(off.Seconds()/on.Seconds()-1))
	}
}

// Throughput with tenants: see measureTenantThroughput.
func TestMeasureTenantThroughput(t *testing.T) {
	benchOnly(t)
	c := benchClient(t, redistest.StartServer(t).Addr())
	n := 0
	measureTenantThroughput(t, func() store.Store {
		n++
		s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: fmt.Sprint("thr", n)})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// TestMeasureTenantServerCost: the server's cost per value of tenants'
// turns, the same work on every run, so that two versions of the
// functions compare by the server's own accounting rather than by a wall
// clock that the machine's other work disturbs: 10,000 values over 500
// keys, claimed 8 keys a Claim in strict order (MaxBatch 1) by one worker
// and acked one by one, with 50 tenants (a key's tenant its number mod
// 50) and without, in PACER_BENCH_ROUNDS (5) alternating rounds. Each run
// prints the commands the functions ran, the server's CPU (INFO cpu) and
// its function time (INFO commandstats) per value; the last line the
// medians' ratios.
func TestMeasureTenantServerCost(t *testing.T) {
	benchOnly(t)
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	c := benchClient(t, redistest.StartServer(t).Addr())
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "tenantcost"})
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	const values, keys = 10000, 500
	type cost struct{ cmds, cpu, fn float64 }
	run := func(q string, tenants int) cost {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < values; i = next.Add(1) - 1 {
					p := store.AddParams{}
					if tenants > 0 {
						p.Tenant = fmt.Sprint("t", i%keys%int64(tenants))
					}
					assertNoError(t, s.Add(ctx, q, fmt.Sprint(i%keys), [][]byte{[]byte(fmt.Sprint(i))}, p))
				}
			})
		}
		wg.Wait()
		_, err := s.Stats(ctx, q) // folds the Adds
		require.NoError(t, err)
		before, cpu0 := redistest.ReadCommandStats(t, c), redistest.ServerCPU(t, c)
		n := 0
		for {
			ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 8, MaxBatch: 1, TTL: time.Minute})
			require.NoError(t, err)
			if len(ls) == 0 {
				break
			}
			for _, l := range ls {
				n += len(l.Values)
				_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
				require.NoError(t, err)
			}
		}
		cpu, after := redistest.ServerCPU(t, c)-cpu0, redistest.ReadCommandStats(t, c)
		require.Equal(t, values, n)
		var out cost
		for name, d := range after.Minus(before) {
			switch name {
			case "fcall":
				out.fn = d[1] / values
			case "info", "config":
			default:
				out.cmds += d[0] / values
			}
		}
		out.cpu = float64(cpu.Nanoseconds()) / 1e3 / values
		return out
	}
	var on, off []cost
	for round := range rounds {
		for _, tenants := range []int{0, 50} {
			r := run(fmt.Sprint("cost", round, "-", tenants), tenants)
			if tenants > 0 {
				on = append(on, r)
			} else {
				off = append(off, r)
			}
			fmt.Printf("tenant cost round %d, %2d tenants: %.3f commands/value, server CPU %.1f µs/value, function time %.1f µs/value\n",
				round, tenants, r.cmds, r.cpu, r.fn)
		}
	}
	median := func(cs []cost, f func(cost) float64) float64 {
		xs := make([]float64, len(cs))
		for i, c := range cs {
			xs[i] = f(c)
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	cpu := func(c cost) float64 { return c.cpu }
	fn := func(c cost) float64 { return c.fn }
	cmds := func(c cost) float64 { return c.cmds }
	fmt.Printf("tenant cost median: commands/value %.3f vs %.3f, server CPU %.1f vs %.1f µs/value (%.3fx), function time %.1f vs %.1f µs/value (%.3fx)\n",
		median(on, cmds), median(off, cmds), median(on, cpu), median(off, cpu), median(on, cpu)/median(off, cpu),
		median(on, fn), median(off, fn), median(on, fn)/median(off, fn))
}
