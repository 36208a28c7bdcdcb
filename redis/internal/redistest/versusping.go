package redistest

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// InFlight is the number of calls in flight in the parallel benchmarks:
// more than the machine's cores, as calls to Redis spend most of their
// time waiting.
const InFlight = 8

// round is how many calls a benchmark makes before it switches between
// its operation and PING, so that both see the same machine.
const round = 64

// VersusPing runs op against PING on c as two sub-benchmarks: serial,
// one call at a time, and parallel8, InFlight calls at once (see
// versusPing).
func VersusPing(b *testing.B, c *redis.Client, op func(i int64) error) {
	b.Run("serial", func(b *testing.B) { versusPing(b, c, 1, op) })
	b.Run("parallel8", func(b *testing.B) { versusPing(b, c, InFlight, op) })
}

// PingVersusPing is VersusPing of PING itself: the floor of the other
// benchmarks, whose x-ping shows how far two sides of one benchmark
// drift apart on the machine.
func PingVersusPing(b *testing.B, c *redis.Client) {
	ctx := context.Background()
	VersusPing(b, c, func(int64) error { return c.Ping(ctx).Err() })
}

// versusPing runs op b.N times, by width goroutines at once, in rounds of
// 64 calls that alternate with rounds of PING of the same shape on c, the
// order of each pair swapped every time. op gets a number no other of
// the benchmark's calls gets, from 1 up. It reports the time of a PING
// (ping-ns/op) and op's time as a multiple of it: over all rounds
// (x-ping), and the median over pairs of rounds of op's round time over
// PING's (x-ping-med), which a burst of load on a shared machine sways
// less. Only op's rounds are timed, and counted in allocs/op.
func versusPing(b *testing.B, c *redis.Client, width int, op func(i int64) error) {
	ctx := context.Background()
	ping := func(int64) error { return c.Ping(ctx).Err() }
	var pings, ops time.Duration
	var ratios []float64
	var seq atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += round {
		n := min(round, b.N-done)
		var p, o time.Duration
		if len(ratios)%2 == 0 {
			b.StopTimer()
			p = timeRound(b, width, n, &seq, ping)
			b.StartTimer()
			o = timeRound(b, width, n, &seq, op)
		} else {
			o = timeRound(b, width, n, &seq, op)
			b.StopTimer()
			p = timeRound(b, width, n, &seq, ping)
			b.StartTimer()
		}
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

// timeRound runs op n times over width goroutines (inline when width is
// 1, which spares a serial round a goroutine's start) and returns how
// long that took.
func timeRound(b *testing.B, width, n int, seq *atomic.Int64, op func(i int64) error) time.Duration {
	start := time.Now()
	if width == 1 {
		for range n {
			if err := op(seq.Add(1)); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	var left atomic.Int64
	left.Store(int64(n))
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
