package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisrate"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// flowVariant is one Runner setting of TestMeasureFlowThroughput, and
// the variant it is measured against.
type flowVariant struct {
	name, against string
	set           func(t *testing.T, c *redis.Client, cfg *pacer.Config[string, int])
}

// The flow-control settings on, each against the same run without it,
// end to end: a Runner (8 workers, a handler that does nothing) through
// 500 keys of 10 values each, in PACER_BENCH_ROUNDS (5) alternating
// rounds, each variant on a queue of its own. Strict order (MaxBatch 1)
// with 100 tenants (Config.Tenant: a key's last two digits), with a
// per-key limit that never defers (Config.KeyLimit, 10^6 a second, burst
// 1,000), once ratelimit.Keyed in the process and once redisrate.Keyed on
// the same server, and with the rate per key that the engine keeps, which
// never defers either (Config.KeyRate, 1 µs, burst 1); PerKey 2 needs
// MaxBatch 2 or more, so it is measured against PerKey 1 with MaxBatch 2. Each run prints values/s, and the server's
// commands and CPU per value (INFO commandstats and cpu); the last lines
// the medians and each variant's ratio of median values/s (and the range
// and median of the rounds' own ratios) and of median server CPU to the
// one it is measured against. The target is at most
// 10% slower. With PACER_BENCH_CMDS=1 each run also prints its commands
// a value by command (INFO commandstats); PACER_BENCH_FLOW, a list of
// variants' names separated by commas, runs only those (a variant
// without the one it is measured against prints no ratios).
func TestMeasureFlowThroughput(t *testing.T) {
	benchOnly(t)
	const keys, per = 500, 10
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	c := benchClient(t, redistest.StartServer(t).Addr())
	variants := []flowVariant{
		{"strict", "", func(*testing.T, *redis.Client, *pacer.Config[string, int]) {}},
		{"tenants", "strict", func(_ *testing.T, _ *redis.Client, cfg *pacer.Config[string, int]) {
			cfg.Tenant = func(k string) string { return "t" + k[len(k)-2:] }
		}},
		{"keylimit-local", "strict", func(t *testing.T, _ *redis.Client, cfg *pacer.Config[string, int]) {
			k, err := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{Rate: 1e6, Burst: 1000})
			require.NoError(t, err)
			cfg.KeyLimit = k
		}},
		{"keylimit-redis", "strict", func(t *testing.T, c *redis.Client, cfg *pacer.Config[string, int]) {
			k, err := redisrate.NewKeyed(t.Context(), c, redisrate.KeyedConfig{Rate: redisrate.MaxRate, Burst: 1000, Name: "flow"})
			require.NoError(t, err)
			cfg.KeyLimit = k
		}},
		{"keyrate", "strict", func(_ *testing.T, _ *redis.Client, cfg *pacer.Config[string, int]) {
			cfg.KeyRate = store.KeyRate{Interval: time.Microsecond, Burst: 1}
		}},
		{"maxbatch2", "", func(_ *testing.T, _ *redis.Client, cfg *pacer.Config[string, int]) { cfg.MaxBatch = 2 }},
		{"perkey2", "maxbatch2", func(_ *testing.T, _ *redis.Client, cfg *pacer.Config[string, int]) {
			cfg.MaxBatch, cfg.PerKey = 2, 2
		}},
	}
	if only := os.Getenv("PACER_BENCH_FLOW"); only != "" {
		names := strings.Split(only, ",")
		variants = slices.DeleteFunc(variants, func(v flowVariant) bool { return !slices.Contains(names, v.name) })
	}
	type result struct{ rate, cmds, cpu float64 }
	results := map[string][]result{}
	n := 0
	run := func(v flowVariant) result {
		n++
		s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: fmt.Sprint("flow", n)})
		require.NoError(t, err)
		defer s.Close()
		q := v.name
		cfg := pacer.Config[string, int]{Store: s, Name: q, MaxBatch: 1, Workers: 8}
		v.set(t, c, &cfg)
		r, done := flowRunner(t, cfg, keys, per)
		ctx := context.Background()
		cpu0, stats0 := redistest.ServerCPU(t, c), redistest.ReadCommandStats(t, c)
		t0 := time.Now()
		go func() { _ = r.Run(ctx) }()
		<-done
		took := time.Since(t0)
		server, stats := redistest.ServerCPU(t, c)-cpu0, redistest.ReadCommandStats(t, c)
		cmds := stats.Minus(stats0).Calls()
		printCommandStats(stats0, stats, keys*per)
		require.NoError(t, r.Shutdown(ctx))
		return result{keys * per / took.Seconds(), float64(cmds) / (keys * per), float64(server.Nanoseconds()) / 1e3 / (keys * per)}
	}
	for round := range rounds {
		for _, v := range variants {
			res := run(v)
			results[v.name] = append(results[v.name], res)
			fmt.Printf("flow round %d %-15s %6.0f values/s, %5.1f commands/value, server CPU %5.1f µs/value\n",
				round, v.name, res.rate, res.cmds, res.cpu)
		}
	}
	median := func(name string, f func(result) float64) float64 {
		var xs []float64
		for _, r := range results[name] {
			xs = append(xs, f(r))
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	rate := func(r result) float64 { return r.rate }
	cpu := func(r result) float64 { return r.cpu }
	cmds := func(r result) float64 { return r.cmds }
	for _, v := range variants {
		line := fmt.Sprintf("flow median %-15s %6.0f values/s, %5.1f commands/value, server CPU %5.1f µs/value",
			v.name, median(v.name, rate), median(v.name, cmds), median(v.name, cpu))
		if v.against != "" && len(results[v.against]) > 0 {
			// The rounds' own ratios too: the runs of a round are next to
			// one another in time, so a shared machine's load varies less.
			var ratios []float64
			for i, r := range results[v.name] {
				ratios = append(ratios, r.rate/results[v.against][i].rate)
			}
			slices.Sort(ratios)
			line += fmt.Sprintf("; against %s: values/s %.3fx (rounds' ratios %.3f-%.3f, median %.3f), server CPU %.3fx", v.against,
				median(v.name, rate)/median(v.against, rate), ratios[0], ratios[len(ratios)-1], ratios[len(ratios)/2],
				median(v.name, cpu)/median(v.against, cpu))
		}
		fmt.Println(line)
	}
}

// flowRunner returns a Runner of cfg with a no-op handler, keys x per
// values added to it and folded by its Store, and a channel closed once
// the handler has seen them all.
func flowRunner(t *testing.T, cfg pacer.Config[string, int], keys, per int) (*pacer.Runner[string, int], <-chan struct{}) {
	t.Helper()
	var left atomic.Int64
	left.Store(int64(keys * per))
	done := make(chan struct{})
	r, err := pacer.New(cfg, func(_ context.Context, _ string, vals []int) error {
		if left.Add(-int64(len(vals))) == 0 {
			close(done)
		}
		return nil
	})
	require.NoError(t, err)
	ctx := context.Background()
	for i := range per {
		for k := range keys {
			require.NoError(t, r.Add(ctx, fmt.Sprintf("k%03d", k), i))
		}
	}
	st, err := cfg.Store.Stats(ctx, cfg.Name) // folds the Adds
	require.NoError(t, err)
	require.Equal(t, keys*per, st.Values)
	return r, done
}
