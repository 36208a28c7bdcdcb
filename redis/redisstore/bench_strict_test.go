package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestMeasureStrictPath measures the strict path end to end, in the
// test's own process: 20,000 values added over 500 keys (or 20,000),
// then handled by one Runner of 8 workers with a no-op handler, MaxBatch
// 1, timed from Run until the handler saw the last value. Each round
// runs each workload next to its floor: PING from 8 goroutines on the
// same client (8 in flight), and prints values/s, PINGs/s and their
// ratio, with the round trips the client made, the scripts and commands
// the server ran (INFO commandstats), the CPU time of the server and of
// this process, per value, and this process's allocations per value (the
// shutdown after the last value included, the test's hook's counting
// too) and its GC cycles. PACER_BENCH_ROUNDS sets the rounds (3).
//
// Then one more run of each workload (of the first PACER_BENCH_PROFILED
// if set), under a CPU and a block profile of this process and with the server's slow log recording every command,
// breaks a value's time down: the server's time by script and by
// command, this process's CPU time by part of the code (the Runner, the
// adapter, the store, the codec, go-redis), and the time workers wait
// for each other (for a lease handed over, for a shared finish script).
func TestMeasureStrictPath(t *testing.T) {
	benchOnly(t)
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	addr := redistest.StartServer(t).Addr()
	hook := &roundTrips{commands: map[string]int{}}
	c := benchClient(t, addr)
	c.AddHook(hook)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "sp"})
	require.NoError(t, err)
	defer s.Close()
	v := func(i int) []byte { return []byte(strconv.Itoa(i)) }
	queue := 0
	fillQueue := func(sc storetest.StrictCase) string {
		q := fmt.Sprintf("q%d", queue)
		queue++
		fill(t, s, q, storetest.StrictValues, sc.Keys, v)
		return q
	}
	type measured struct {
		stats  redistest.CommandStats
		server time.Duration
	}
	last := map[string]measured{}
	for round := range rounds {
		for _, sc := range storetest.StrictCases {
			pings := pingFloor(t, c, storetest.StrictWorkers, storetest.StrictValues)
			q := fillQueue(sc)
			hook.reset()
			stats0, server0, proc0 := redistest.ReadCommandStats(t, c), redistest.ServerCPU(t, c), storetest.ProcessCPU(t)
			var mem0, mem1 runtime.MemStats
			runtime.ReadMemStats(&mem0)
			took := storetest.RunStrict[int](t, s, q, storetest.StrictRun{Workers: storetest.StrictWorkers, AckInBackground: sc.Background, Values: storetest.StrictValues})
			runtime.ReadMemStats(&mem1)
			proc, server := storetest.ProcessCPU(t)-proc0, redistest.ServerCPU(t, c)-server0
			stats := redistest.ReadCommandStats(t, c).Minus(stats0)
			emptyQueue(t, s, q)
			last[sc.Name] = measured{stats, server}
			rate := storetest.StrictValues / took.Seconds()
			fmt.Printf("strict path, %s, round %d: %.0f values/s, PING 8 in flight %.0f/s, ratio %.3f; per value: %.3f round trips, %.3f scripts, %.2f commands, CPU µs: server %.1f (its commands %.1f), this process %.1f; this process's allocations %.1f, %.0f bytes, GC cycles %d in all\n",
				sc.Name, round, rate, pings, rate/pings, perValue(hook.total()), perValue(stats.Scripts()), perValue(stats.Calls()),
				micros(server), perValue(stats.OwnUsec()), micros(proc),
				perValue(float64(mem1.Mallocs-mem0.Mallocs)), perValue(float64(mem1.TotalAlloc-mem0.TotalAlloc)), mem1.NumGC-mem0.NumGC)
		}
	}
	for _, sc := range storetest.StrictCases[:profiled()] {
		q := fillQueue(sc)
		hook.reset()
		stats0, cpu0 := redistest.ReadCommandStats(t, c), redistest.ServerCPU(t, c)
		require.NoError(t, c.ConfigSet(t.Context(), "slowlog-max-len", "1000000").Err())
		require.NoError(t, c.ConfigSet(t.Context(), "slowlog-log-slower-than", "0").Err())
		require.NoError(t, c.SlowLogReset(t.Context()).Err())
		var took time.Duration
		p := storetest.ProfileRun(t, "redis-"+strings.ReplaceAll(strings.ReplaceAll(sc.Name, ",", ""), " ", "-"), func() {
			took = storetest.RunStrict[int](t, s, q, storetest.StrictRun{Workers: storetest.StrictWorkers, AckInBackground: sc.Background, Values: storetest.StrictValues})
		})
		require.NoError(t, c.ConfigSet(t.Context(), "slowlog-log-slower-than", "-1").Err())
		server := redistest.ServerCPU(t, c) - cpu0
		stats := redistest.ReadCommandStats(t, c).Minus(stats0)
		slow, err := c.SlowLogGet(t.Context(), -1).Result()
		require.NoError(t, err)
		require.NoError(t, c.SlowLogReset(t.Context()).Err())
		emptyQueue(t, s, q)
		fmt.Printf("\nstrict path, %s: per value\n", sc.Name)
		if m, ok := last[sc.Name]; ok {
			fmt.Printf("  (last round)")
			printServerCommands(m.stats, m.server)
		}
		fmt.Printf("  profiled (%v, %.0f values/s under the profiles and the slow log):\n", took.Round(time.Millisecond), storetest.StrictValues/took.Seconds())
		printRoundTrips(hook)
		printScripts(slow)
		printServerCommands(stats, server)
		storetest.PrintCPUShares(t, p, storetest.StrictValues, cpuShares)
		storetest.PrintWaits(t, p, storetest.StrictValues, storetest.StrictWorkers, took, combined)
	}
}

// profiled returns how many of storetest.StrictCases to profile:
// PACER_BENCH_PROFILED, or all of them.
func profiled() int {
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_PROFILED")); err == nil {
		return min(n, len(storetest.StrictCases))
	}
	return len(storetest.StrictCases)
}

func perValue(n float64) float64 { return n / storetest.StrictValues }

// micros returns d per value, in µs.
func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / storetest.StrictValues }

// pingFloor returns how many PINGs a second c makes from goroutines
// goroutines at once, n in all.
func pingFloor(t *testing.T, c *redis.Client, goroutines, n int) float64 {
	var wg sync.WaitGroup
	t0 := time.Now()
	for range goroutines {
		wg.Go(func() {
			for range n / goroutines {
				assertNoError(t, c.Ping(context.Background()).Err())
			}
		})
	}
	wg.Wait()
	return float64(n) / time.Since(t0).Seconds()
}

// emptyQueue fails t unless queue q of s holds nothing.
func emptyQueue(t *testing.T, s *redisstore.Store, q string) {
	st, err := s.Stats(t.Context(), q)
	require.NoError(t, err)
	require.Zero(t, st.Values, "values left in the queue")
}

// roundTrips counts what a client sends: each command that it processes
// alone is a round trip, as is each pipeline.
type roundTrips struct {
	mu        sync.Mutex
	commands  map[string]int // by name, and function or script for FCALL and EVALSHA
	pipelines int
}

func (h *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		h.commands[commandName(cmd)]++
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.mu.Lock()
		h.pipelines++
		for _, cmd := range cmds {
			h.commands["(pipelined) "+commandName(cmd)]++
		}
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (h *roundTrips) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.commands, h.pipelines = map[string]int{}, 0
}

// total returns the round trips counted since reset.
func (h *roundTrips) total() float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count()
}

// count returns the round trips counted, under h.mu.
func (h *roundTrips) count() float64 {
	n := h.pipelines
	for name, calls := range h.commands {
		if !strings.HasPrefix(name, "(pipelined) ") {
			n += calls
		}
	}
	return float64(n)
}

// commandName is cmd's name, with the function's or the script's for
// FCALL and EVALSHA.
func commandName(cmd redis.Cmder) string {
	name := cmd.Name()
	if args := cmd.Args(); (name == "fcall" || name == "evalsha") && len(args) > 1 {
		return fmt.Sprintf("%s %v", name, args[1])
	}
	return name
}

func printRoundTrips(h *roundTrips) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Printf("  client: %.3f round trips (%.3f pipelines)\n", perValue(h.count()), perValue(float64(h.pipelines)))
	for _, name := range sortedBy(h.commands, func(n int) float64 { return float64(n) }) {
		fmt.Printf("    %-40s %.4f\n", name, perValue(float64(h.commands[name])))
	}
}

// printScripts prints the calls and the server's time (the slow log's
// duration of each, set to record every command) by command, and by
// function for FCALL.
func printScripts(slow []redis.SlowLog) {
	type sum struct {
		calls int
		d     time.Duration
	}
	by := map[string]*sum{}
	var total time.Duration
	for _, e := range slow {
		name := strings.ToLower(fmt.Sprint(e.Args[0]))
		if (name == "fcall" || name == "evalsha") && len(e.Args) > 1 {
			name += " " + e.Args[1]
		}
		if by[name] == nil {
			by[name] = &sum{}
		}
		by[name].calls++
		by[name].d += e.Duration
		if strings.HasPrefix(name, "fcall ") || strings.HasPrefix(name, "evalsha ") {
			total += e.Duration
		}
	}
	fmt.Printf("  server, by script and by command (slow log, %d entries; it lists the commands that scripts run too, whose time is within the scripts'): scripts %.1f µs\n",
		len(slow), float64(total.Microseconds())/storetest.StrictValues)
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return int(by[b].d - by[a].d) })
	for _, n := range names {
		b := by[n]
		fmt.Printf("    %-40s %.4f calls, %6.1f µs/call, %5.2f µs/value\n", n, perValue(float64(b.calls)),
			float64(b.d.Microseconds())/float64(b.calls), float64(b.d.Microseconds())/storetest.StrictValues)
	}
}

func printServerCommands(cs redistest.CommandStats, server time.Duration) {
	fmt.Printf("  server: CPU (INFO cpu) %.1f µs; by command (INFO commandstats, a script's own µs include its commands'):\n", micros(server))
	for _, name := range sortedBy(cs, func(v [2]float64) float64 { return v[1] }) {
		v := cs[name]
		fmt.Printf("    %-40s %.4f calls, %6.2f µs/call, %5.2f µs/value\n", name, perValue(v[0]), v[1]/v[0], perValue(v[1]))
	}
}

// sortedBy returns m's keys, the greatest by of its value first.
func sortedBy[V any](m map[string]V, by func(V) float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		x, y := by(m[a]), by(m[b])
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}

// cpuShares are the parts of the code that a value's CPU time in this
// process is put on.
var cpuShares = []storetest.Share{
	{Name: "codec", Has: storetest.IsCodec},
	{Name: "go-redis", Has: storetest.Prefixed("github.com/redis/go-redis/")},
	{Name: "store (redisstore)", Has: storetest.Prefixed("github.com/pacerkit/pacer/redis/redisstore.")},
	{Name: "adapter (internal/...)", Has: storetest.Prefixed("github.com/pacerkit/pacer/internal/")},
	{Name: "Runner (root package)", Has: storetest.Prefixed("github.com/pacerkit/pacer.")},
	{Name: "test (handler, harness)", Has: storetest.Prefixed("github.com/pacerkit/pacer/store/storetest.", "testing.")},
}

// combined is where a redisstore finish call waits for the script ahead.
var combined = storetest.Prefixed("github.com/pacerkit/pacer/redis/redisstore.(*combiner).do")
