package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// throughputChild is set in the environment of the processes that
// TestMeasureThroughput starts: "addr prefix queue maxbatch".
const throughputChild = "PACER_THROUGHPUT_CHILD"

// End-to-end throughput: 20,000 values over 500 keys are added, then
// handled by 2 OS processes (this test binary, run again) of one Runner
// with 4 workers each and a no-op handler, in strict (MaxBatch 1) and
// coalesce (MaxBatch 0) modes. The time runs from the go signal, which the
// processes get once they are connected and waiting, until the store is
// empty. The target is 12,600 values a second or more. Per value, it also
// prints the scripts and the commands (INFO commandstats, the test's own
// polling of Stats included) that the server ran meanwhile, the CPU time
// it spent, and the CPU time the two processes spent in their whole run.
func TestMeasureThroughput(t *testing.T) {
	benchOnly(t)
	addr := redistest.StartServer(t).Addr()
	c := benchClient(t, addr)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "tp"})
	require.NoError(t, err)
	defer s.Close()
	const values, keys, rounds = 20000, 500, 3
	v := func(i int) []byte { return []byte(strconv.Itoa(i)) }
	for _, mode := range []struct {
		name     string
		maxBatch int
	}{{"strict", 1}, {"coalesce", 0}} {
		for round := range rounds {
			q := fmt.Sprintf("%s-%d", mode.name, round)
			fill(t, s, q, values, keys, v)
			var procs []*storetest.Process
			for range 2 {
				procs = append(procs, storetest.StartProcess(t, "TestThroughputChild",
					throughputChild, addr, "tp", q, strconv.Itoa(mode.maxBatch)))
			}
			cpu0, stats0 := redistest.ServerCPU(t, c), redistest.ReadCommandStats(t, c)
			t0 := time.Now()
			for _, p := range procs {
				p.Go(t)
			}
			for {
				st, err := s.Stats(t.Context(), q)
				require.NoError(t, err)
				if st.Values == 0 {
					break
				}
				time.Sleep(2 * time.Millisecond)
			}
			took := time.Since(t0)
			server := redistest.ServerCPU(t, c) - cpu0
			stats1 := redistest.ReadCommandStats(t, c)
			scripts, cmds := stats1.Minus(stats0).Scripts(), stats1.Minus(stats0).Calls()
			handled := 0
			var procCPU time.Duration
			for _, p := range procs {
				n, cpu := p.Stop(t)
				handled += n
				procCPU += cpu
			}
			require.Equal(t, values, handled, "every value handled once")
			perValue := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / values }
			fmt.Printf("throughput %s round %d: %d values in %v: %.0f values/s; per value: %.2f scripts, %.1f commands, CPU: server %.1f µs, processes %.1f µs\n",
				mode.name, round, values, took.Round(time.Millisecond), values/took.Seconds(),
				scripts/values, cmds/values, perValue(server), perValue(procCPU))
			printCommandStats(stats0, stats1, values)
		}
	}
}

// fill adds n values over keys keys to queue q, 16 Adds in flight.
func fill(t *testing.T, s *redisstore.Store, q string, n, keys int, v func(int) []byte) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				assertNoError(t, s.Add(context.Background(), q, strconv.Itoa(i%keys), [][]byte{v(i)}, store.AddParams{}))
			}
		})
	}
	wg.Wait()
}

func assertNoError(t *testing.T, err error) {
	if err != nil {
		t.Error(err)
	}
}

// TestThroughputChild is one process of TestMeasureThroughput: a Runner
// with 4 workers and a no-op handler (storetest.ServeThroughput), once
// connected to the server.
func TestThroughputChild(t *testing.T) {
	f := storetest.ProcessArgs(t, throughputChild)
	addr, prefix, q := f[0], f[1], f[2]
	maxBatch, err := strconv.Atoi(f[3])
	require.NoError(t, err)
	c := benchClient(t, addr)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: prefix})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, c.Ping(context.Background()).Err())
	storetest.ServeThroughput[int](t, s, q, maxBatch)
}
