package pgrate_test

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer/pg/pgrate"
)

// huge is a rate and burst under which no call waits or is refused: the
// benchmarks measure the round trip and the statement, not the pacing.
const huge = 1e6

// inFlight is the number of calls in flight in the parallel rounds: more
// than the machine's cores, as calls to the server spend most of their
// time waiting.
const inFlight = 8

// round is how many calls a benchmark makes before it switches between
// its operation and SELECT 1, so that both see the same machine.
const round = 64

// BenchmarkSelect1 is the floor of the others: one round trip that does
// nothing. Its x-select1, SELECT 1 against SELECT 1, shows how far two
// sides of one benchmark drift apart on this machine.
func BenchmarkSelect1(b *testing.B) {
	pool := connect(b)
	versusSelect1(b, pool, func(int64) error { return select1(pool) })
}

// BenchmarkAllow runs Bucket.Allow (one statement) and reports its time
// as a multiple of a SELECT 1's on the same pool (x-select1).
func BenchmarkAllow(b *testing.B) {
	pool := connect(b)
	l := newBucket(b, pool, pgrate.BucketConfig{Rate: huge, Burst: huge, Name: "bench", Schema: freshSchema(b, pool)})
	ctx := context.Background()
	versusSelect1(b, pool, func(int64) error {
		ok, err := l.Allow(ctx)
		if err == nil && !ok {
			b.Fatal("Allow refused at a huge rate")
		}
		return err
	})
}

// BenchmarkWait runs Bucket.Wait, which never sleeps at a huge rate, and
// reports its time as a multiple of a SELECT 1's (x-select1).
func BenchmarkWait(b *testing.B) {
	pool := connect(b)
	l := newBucket(b, pool, pgrate.BucketConfig{Rate: huge, Burst: huge, Name: "bench", Schema: freshSchema(b, pool)})
	ctx := context.Background()
	versusSelect1(b, pool, func(int64) error { return l.Wait(ctx) })
}

// BenchmarkKeyedAllow runs Keyed.Allow over 1,000 keys and reports its
// time as a multiple of a SELECT 1's (x-select1).
func BenchmarkKeyedAllow(b *testing.B) {
	pool := connect(b)
	k := newKeyed(b, pool, pgrate.KeyedConfig{Rate: huge, Burst: huge, Name: "bench", Schema: freshSchema(b, pool)})
	ctx := context.Background()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "account-" + strconv.Itoa(i)
	}
	versusSelect1(b, pool, func(i int64) error {
		_, err := k.Allow(ctx, keys[i%int64(len(keys))])
		return err
	})
}

func select1(pool *pgxpool.Pool) error {
	var one int
	return pool.QueryRow(context.Background(), "SELECT 1").Scan(&one)
}

// versusSelect1 runs op against SELECT 1 on pool as two sub-benchmarks:
// serial, one call at a time, and parallel8, inFlight calls at once. Each
// runs op b.N times in rounds of 64 calls that alternate with rounds of
// SELECT 1 of the same shape, the order of each pair swapped every time.
// It reports the time of a SELECT 1 (select1-ns/op) and op's time as a
// multiple of it: over all rounds (x-select1), and the median over pairs
// of rounds of op's round time over SELECT 1's (x-select1-med), which a
// burst of load on a shared machine sways less. Only op's rounds are
// timed.
func versusSelect1(b *testing.B, pool *pgxpool.Pool, op func(i int64) error) {
	for _, width := range []int{1, inFlight} {
		name := "serial"
		if width > 1 {
			name = "parallel" + strconv.Itoa(width)
		}
		b.Run(name, func(b *testing.B) {
			// Warm every connection, so that no round pays a dial or a
			// statement's preparation.
			var seq atomic.Int64
			timeRound(b, 2*inFlight, 4*inFlight, &seq, op)
			timeRound(b, 2*inFlight, 4*inFlight, &seq, func(int64) error { return select1(pool) })
			var floor, ops time.Duration
			var ratios []float64
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; done += round {
				n := min(round, b.N-done)
				var f, o time.Duration
				s1 := func(int64) error { return select1(pool) }
				if len(ratios)%2 == 0 {
					b.StopTimer()
					f = timeRound(b, width, n, &seq, s1)
					b.StartTimer()
					o = timeRound(b, width, n, &seq, op)
				} else {
					o = timeRound(b, width, n, &seq, op)
					b.StopTimer()
					f = timeRound(b, width, n, &seq, s1)
					b.StartTimer()
				}
				floor += f
				ops += o
				ratios = append(ratios, float64(o)/float64(f))
			}
			b.StopTimer()
			slices.Sort(ratios)
			b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N), "select1-ns/op")
			b.ReportMetric(float64(ops)/float64(floor), "x-select1")
			b.ReportMetric(ratios[len(ratios)/2], "x-select1-med")
		})
	}
}

// timeRound runs op n times over width goroutines (inline when width is
// 1) and returns how long that took.
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
