package redisstore_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/redisstore"
)

// inFlight is the number of commands in flight in the parallel
// benchmarks.
const inFlight = 8

// round is how many calls a benchmark makes before it switches between
// its operation and PING, so that both see the same machine.
const round = 64

// BenchmarkPing is the floor of every other benchmark here: one round trip
// to the server. Against PING itself, x-ping shows how much two sets of
// rounds differ by chance on the machine.
//
// The benchmarks run against a redis-server of their own (see
// benchServer), so that no other client's commands queue with theirs.
func BenchmarkPing(b *testing.B) {
	c := benchClient(b, benchServer(b))
	ctx := context.Background()
	ping := func(int64) error { return c.Ping(ctx).Err() }
	b.Run("serial", func(b *testing.B) { versusPing(b, c, 1, ping) })
	b.Run("parallel8", func(b *testing.B) { versusPing(b, c, inFlight, ping) })
}

// BenchmarkAdd adds one value at a time to 1,000 keys, ready at once, and
// reports its cost as a multiple of a PING's (x-ping).
func BenchmarkAdd(b *testing.B) {
	c := benchClient(b, benchServer(b))
	s, err := redisstore.New(c, redisstore.Config{Prefix: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	v := [][]byte{[]byte(`{"user":42,"task":"recompute"}`)}
	add := func(i int64) error {
		return s.Add(ctx, "bench", strconv.FormatInt(i%1000, 10), v, store.AddParams{})
	}
	b.Run("serial", func(b *testing.B) { versusPing(b, c, 1, add) })
	b.Run("parallel8", func(b *testing.B) { versusPing(b, c, inFlight, add) })
}

// versusPing runs op b.N times, by width goroutines at once, in rounds that
// alternate with rounds of PING of the same shape; it reports the time of
// a PING (ping-ns/op) and op's time as a multiple of it: over all rounds
// (x-ping), and the median of the rounds' own ratios (x-ping-med), which a
// burst of load on a shared machine sways less.
func versusPing(b *testing.B, c *redis.Client, width int, op func(i int64) error) {
	ctx := context.Background()
	ping := func(int64) error { return c.Ping(ctx).Err() }
	var pings, ops time.Duration
	var ratios []float64
	var seq atomic.Int64
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		n := min(round, b.N-done)
		b.StopTimer()
		p := timeRound(b, width, n, &seq, ping)
		b.StartTimer()
		o := timeRound(b, width, n, &seq, op)
		pings += p
		ops += o
		ratios = append(ratios, float64(o)/float64(p))
	}
	b.StopTimer()
	slices.Sort(ratios)
	b.ReportMetric(float64(pings.Nanoseconds())/float64(b.N), "ping-ns/op")
	b.ReportMetric(float64(ops)/float64(pings), "x-ping")
	b.ReportMetric(ratios[len(ratios)/2], "x-ping-med")
}

// timeRound runs op n times over width goroutines and returns how long
// that took.
func timeRound(b *testing.B, width, n int, seq *atomic.Int64, op func(i int64) error) time.Duration {
	var left atomic.Int64
	left.Store(int64(n))
	start := time.Now()
	var wg sync.WaitGroup
	for range width {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := op(seq.Add(1)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}
