package baseline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/baseline/floor"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestMeasureStrictFloor measures the floor of pacer's strict guarantees
// on Redis (package floor: a key's values in a list, a ready order of
// keys, a lease with a fence and an expiry, one function call for several
// workers' ends and next claims), the same floor with redisstore's layout
// of a key's state (floor.KeyHash) and with a lean one (KeyHashLean), the
// floor with a hand-off of each call to a goroutine (as pacer's adapter
// makes them) and with the adapter's ctx and timers besides (goSide), and
// pacer's strict path (redisstore, a Runner of 8 workers, MaxBatch 1,
// with and without AckInBackground), against one redis-server of its own,
// in rounds that rotate their order. Each runs 20,000 values over 500
// keys, and over 20,000, with 8 workers and a no-op handler (the floor's
// checks that each key's values come once and in Add order), timed from
// the workers' start until the handler saw the last value, after the
// queue was filled (16 Adds in flight, each key's Adds in turn; pacer's
// Adds folded into their keys then, so that the fill holds all of an
// Add's cost for each store and the run none). Each prints values/s, next
// to PING from 8 goroutines on the same client; per value, the round
// trips (a client hook), function calls and commands (INFO commandstats:
// those the functions run included) and the commands' own µs, the
// server's CPU (INFO cpu), this process's CPU (getrusage) and
// allocations, and the server's CPU and commands a value of the fill;
// then the medians and ranges over the rounds.
//
// PACER_BENCH=1 runs it, PACER_BENCH_ROUNDS sets the rounds (3),
// PACER_BENCH_STORES the stores, by id, comma-separated (all: floor,
// floor-keyhash, floor-lean, floor-handoff, floor-adapterlike, pacer,
// pacer-bg);
// PACER_BENCH_PROFILES=dir writes a CPU profile of this process over each
// run to dir.
func TestMeasureStrictFloor(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	c := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr(), PoolSize: 64})
	t.Cleanup(func() { _ = c.Close() })
	hook := &roundTrips{}
	c.AddHook(hook)
	ps, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "sp"})
	require.NoError(t, err)
	defer ps.Close()

	impls := []strictImpl{
		floorImpl(t, c, "floor", "floor", floor.LeaseMember, direct),
		floorImpl(t, c, "floor-keyhash", "floor, redisstore's key hash", floor.KeyHash, direct),
		floorImpl(t, c, "floor-lean", "floor, a lean key hash", floor.KeyHashLean, direct),
		floorImpl(t, c, "floor-handoff", "floor, a hand-off a call", floor.LeaseMember, handOff),
		floorImpl(t, c, "floor-adapterlike", "floor, the adapter's ctx and timers", floor.LeaseMember, adapterLike),
		pacerImpl(t, c, ps, "pacer", "pacer", false),
		pacerImpl(t, c, ps, "pacer-bg", "pacer, AckInBackground", true),
	}
	if ids := os.Getenv("PACER_BENCH_STORES"); ids != "" {
		impls = slices.DeleteFunc(impls, func(im strictImpl) bool { return !slices.Contains(strings.Split(ids, ","), im.id) })
	}
	var figs figures
	queue := 0
	for round := range rounds {
		for _, sc := range []struct {
			name string
			keys int
		}{{"500 keys", keys}, {"distinct keys", values}} {
			ping := pings(t, c)
			figs.add(sc.name+", PING/s", ping)
			for j := range impls {
				im := impls[(j+round)%len(impls)]
				queue++
				r := im.measure(t, c, hook, fmt.Sprintf("f%d", queue), sc.keys, fmt.Sprintf("%s-%d-%d", im.id, sc.keys, round))
				name := sc.name + ", " + im.name
				rate := values / r.took.Seconds()
				figs.add(name+": values/s", rate)
				figs.add(name+": x PING", rate/ping)
				figs.add(name+": round trips", r.roundTrips)
				figs.add(name+": function calls", r.run.Scripts()/values)
				figs.add(name+": commands", r.run.Calls()/values)
				figs.add(name+": commands' own µs", r.run.OwnUsec()/values)
				figs.add(name+": server CPU µs", r.server)
				figs.add(name+": process CPU µs", r.process)
				figs.add(name+": allocations", r.allocs)
				figs.add(name+": fill server CPU µs", r.fillServer)
				figs.add(name+": fill commands", r.fill.Calls()/values)
				fmt.Printf("strict floor, round %d, %s: %.0f values/s (PING 8 in flight %.0f/s, %.3f x); per value %.3f round trips, %.3f function calls, %.2f commands (their own %.1f µs), CPU µs: server %.1f, this process %.1f (%.1f allocations); fill: server %.1f µs, %.2f commands; commands a value:%s\n",
					round, name, rate, ping, rate/ping, r.roundTrips, r.run.Scripts()/values, r.run.Calls()/values, r.run.OwnUsec()/values,
					r.server, r.process, r.allocs, r.fillServer, r.fill.Calls()/values, commandsPerValue(r.run, values))
			}
		}
	}
	fmt.Printf("\nstrict floor, medians (ranges) of %d rounds:\n", rounds)
	figs.print()
}

// floorImpl is the floor, its leases kept as layout says, its workers'
// calls made as side says.
func floorImpl(t *testing.T, c *redis.Client, id, name string, layout floor.Layout, side goSide) strictImpl {
	return strictImpl{id, name, func(q string, keys int) func() time.Duration {
		fs, err := floor.New(t.Context(), c, q, 30*time.Second, layout)
		require.NoError(t, err)
		fillByKey(t, keys, func(k, i int) error { return fs.Add(context.Background(), strconv.Itoa(k), strconv.Itoa(i)) })
		return func() time.Duration { return runFloor(t, fs, keys, side) }
	}}
}

// pacerImpl is pacer's strict path on ps, its Runner's Acks in the
// background if background. Its fill folds the Adds into their keys (a
// Stats call does), the work that the first Claims do otherwise: so the
// fill holds all of Add's cost, as the floor's does, and the run none.
func pacerImpl(t *testing.T, c *redis.Client, ps *redisstore.Store, id, name string, background bool) strictImpl {
	return strictImpl{id, name, func(q string, keys int) func() time.Duration {
		fillByKey(t, keys, func(k, i int) error {
			return ps.Add(context.Background(), q, strconv.Itoa(k), [][]byte{[]byte(strconv.Itoa(i))}, store.AddParams{})
		})
		_, err := ps.Stats(t.Context(), q)
		require.NoError(t, err)
		inbox, err := c.Keys(t.Context(), "*"+q+"*inbox").Result()
		require.NoError(t, err)
		require.Empty(t, inbox, "Stats folded every Add")
		return func() time.Duration {
			took := storetest.RunStrict[int](t, ps, q, storetest.StrictRun{Workers: workers, Values: values, AckInBackground: background})
			st, err := ps.Stats(t.Context(), q)
			require.NoError(t, err)
			require.Zero(t, st.Values, "values left in the queue")
			return took
		}
	}}
}

// A strictImpl is a store of the strict path: fill adds the values of
// queue q over keys keys and returns the run that works them.
type strictImpl struct {
	id, name string
	fill     func(q string, keys int) func() time.Duration
}

// A reading is what measure reads of a fill and its run: CPU per value in
// µs, round trips per value.
type reading struct {
	took                        time.Duration
	fill, run                   redistest.CommandStats
	fillServer, server, process float64
	roundTrips                  float64
	allocs                      float64 // this process's allocations a value, the test's hook's included
}

// measure fills queue q and runs it, and reads both; the run's CPU
// profile, if PACER_BENCH_PROFILES names a directory, goes to its file
// profile.pprof.
func (im strictImpl) measure(t *testing.T, c *redis.Client, hook *roundTrips, q string, keys int, profile string) reading {
	perValue := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / values }
	s0, cpu0 := redistest.ReadCommandStats(t, c), redistest.ServerCPU(t, c)
	run := im.fill(q, keys)
	s1, cpu1, proc1 := redistest.ReadCommandStats(t, c), redistest.ServerCPU(t, c), storetest.ProcessCPU(t)
	hook.take()
	var mem0, mem1 runtime.MemStats
	runtime.ReadMemStats(&mem0)
	stop := startProfile(t, profile)
	took := run()
	stop()
	runtime.ReadMemStats(&mem1)
	trips := hook.take()
	proc2, cpu2, s2 := storetest.ProcessCPU(t), redistest.ServerCPU(t, c), redistest.ReadCommandStats(t, c)
	return reading{took: took, fill: s1.Minus(s0), run: s2.Minus(s1),
		fillServer: perValue(cpu1 - cpu0), server: perValue(cpu2 - cpu1), process: perValue(proc2 - proc1),
		roundTrips: float64(trips) / values, allocs: float64(mem1.Mallocs-mem0.Mallocs) / values}
}

// A goSide is how runFloor's workers make their calls.
type goSide int

const (
	// direct: a worker calls Step itself.
	direct goSide = iota
	// handOff: a worker hands each call to a goroutine of its own and
	// waits for the result, as pacer's engine adapter makes a store call
	// on a goroutine of engineCalls.
	handOff
	// adapterLike: as handOff, with what the adapter makes for each call
	// and lease besides: the call's ctx with a deadline (WithTimeout of
	// WithoutCancel, callContext's), which the worker waits on beside the
	// result; a timer for each lease (time.AfterFunc, the keeper's first
	// renewal), stopped at its end; and the handler's ctx, a
	// WithCancelCause of the worker's, cancelled after it.
	adapterLike
)

// A stepFunc ends a lease, if not nil, and claims the next.
type stepFunc func(ctx context.Context, l *floor.Lease) ([]floor.Lease, error)

// handedOff returns a step that hands each call to a goroutine of its
// own, which makes it with step and hands back its results, and what ends
// that goroutine. With deadline, the caller waits for the result or the
// end of the call's ctx.
func handedOff(step stepFunc, deadline bool) (stepFunc, func()) {
	type call struct {
		ctx context.Context
		l   *floor.Lease
	}
	type result struct {
		taken []floor.Lease
		err   error
	}
	calls, results := make(chan call), make(chan result, 1)
	go func() {
		for c := range calls {
			taken, err := step(c.ctx, c.l)
			results <- result{taken, err}
		}
	}()
	return func(ctx context.Context, l *floor.Lease) ([]floor.Lease, error) {
		if !deadline {
			calls <- call{ctx, l}
			r := <-results
			return r.taken, r.err
		}
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		calls <- call{cctx, l}
		select {
		case r := <-results:
			return r.taken, r.err
		case <-cctx.Done():
			return nil, cctx.Err()
		}
	}, func() { close(calls) }
}

// startProfile starts a CPU profile of this process into
// PACER_BENCH_PROFILES/name.pprof, if set, and returns what stops it.
func startProfile(t *testing.T, name string) (stop func()) {
	dir := os.Getenv("PACER_BENCH_PROFILES")
	if dir == "" {
		return func() {}
	}
	f, err := os.Create(filepath.Join(dir, name+".pprof"))
	require.NoError(t, err)
	require.NoError(t, pprof.StartCPUProfile(f))
	return func() {
		pprof.StopCPUProfile()
		require.NoError(t, f.Close())
	}
}

// fillByKey calls add for the values 0 to values-1, the i-th of key
// i%keys, from adders goroutines, each of which adds the values of its
// keys in turn: so a key's values are added in the order of i.
func fillByKey(t *testing.T, keys int, add func(key, i int) error) {
	var wg sync.WaitGroup
	for g := range adders {
		wg.Go(func() {
			for k := g; k < keys; k += adders {
				for i := k; i < values; i += keys {
					if err := add(k, i); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// runFloor works the values of s, added by fillByKey over keys keys, with
// workers goroutines, each ending its lease and claiming the next in one
// Step, until the handler saw them all, and checks that each key's values
// came once and in Add order. It returns the time from the workers' start
// until the handler saw the last value, once the workers ended their last
// leases. Its workers make their calls as side says.
func runFloor(t *testing.T, s *floor.Store, keys int, side goSide) time.Duration {
	var handled atomic.Int64
	var took time.Duration
	next := make([]int, keys) // each key's next value, i: a key is one worker's at a time
	for k := range next {
		next[k] = k
	}
	var wg sync.WaitGroup
	ctx := context.Background()
	t0 := time.Now()
	for range workers {
		wg.Go(func() {
			wctx, cancel := context.WithCancel(ctx) // the worker's, as a Runner's are
			defer cancel()
			step := stepFunc(func(ctx context.Context, l *floor.Lease) ([]floor.Lease, error) { return s.Step(ctx, l, 1) })
			if side != direct {
				var stop func()
				step, stop = handedOff(step, side == adapterLike)
				defer stop()
			}
			var l *floor.Lease
			var keeper *time.Timer
			for {
				if keeper != nil {
					keeper.Stop()
				}
				taken, err := step(wctx, l)
				if err != nil {
					t.Error(err)
					return
				}
				if len(taken) == 0 {
					if handled.Load() == values {
						return
					}
					// Every key with values is leased, near a run's end:
					// claim again in a while.
					l = nil
					time.Sleep(50 * time.Microsecond)
					continue
				}
				l = &taken[0]
				if side == adapterLike {
					keeper = time.AfterFunc(10*time.Second, func() {})
					hctx, hcancel := context.WithCancelCause(wctx)
					_ = hctx // the handler's ctx: a no-op handler
					hcancel(nil)
				}
				k, _ := strconv.Atoi(l.Key)
				if i, _ := strconv.Atoi(l.Value); i != next[k] {
					t.Errorf("key %d: value %d, want %d", k, i, next[k])
				}
				next[k] += keys
				if handled.Add(1) == values {
					took = time.Since(t0)
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(values), handled.Load())
	for k := range next {
		require.Equal(t, k+values, next[k], "key %d's values, all of them", k)
	}
	ready, err := s.Ready(ctx)
	require.NoError(t, err)
	leased, err := s.Leased(ctx)
	require.NoError(t, err)
	require.Zero(t, ready+leased, "keys ready or leased once all values were handled")
	return took
}
