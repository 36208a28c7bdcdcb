package ratelimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/pacerkit/pacer/ratelimit"
)

// A huge rate and burst: the benchmarks measure the bookkeeping, never a
// sleep.
const benchRate, benchBurst = 1e12, 1 << 30

func BenchmarkBucketAllow(b *testing.B) {
	bk, _ := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: benchRate, Burst: benchBurst})
	for b.Loop() {
		if !bk.Allow() {
			b.Fatal("not allowed")
		}
	}
}

func BenchmarkXRateAllow(b *testing.B) {
	lim := rate.NewLimiter(benchRate, benchBurst)
	for b.Loop() {
		if !lim.Allow() {
			b.Fatal("not allowed")
		}
	}
}

func BenchmarkBucketWait(b *testing.B) {
	bk, _ := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: benchRate, Burst: benchBurst})
	ctx := context.Background()
	for b.Loop() {
		if err := bk.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkXRateWait(b *testing.B) {
	lim := rate.NewLimiter(benchRate, benchBurst)
	ctx := context.Background()
	for b.Loop() {
		if err := lim.Wait(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyedWait waits on keys that all have a bucket already (steady
// state), cycling through them in order as go-limiter's benchmarks do, or
// in a random order.
func BenchmarkKeyedWait(b *testing.B) {
	for _, bc := range []struct {
		n      int
		random bool
	}{{100, false}, {100_000, false}, {100_000, true}} {
		name := fmt.Sprintf("keys=%d", bc.n)
		if bc.random {
			name += ",random"
		}
		b.Run(name, func(b *testing.B) {
			k, _ := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{Rate: 1e9, Burst: 1 << 20, IdleTTL: time.Hour})
			keys := benchKeys(bc.n, bc.random)
			ctx := context.Background()
			for _, key := range keys {
				_ = k.Wait(ctx, key)
			}
			i := 0
			for b.Loop() {
				if err := k.Wait(ctx, keys[i]); err != nil {
					b.Fatal(err)
				}
				if i++; i == len(keys) {
					i = 0
				}
			}
		})
	}
}

// BenchmarkKeyedVsFloor compares Keyed.Wait on 100000 keys, cycled in
// order, with the floor any keyed limiter pays on this machine (read the
// clock, lock, look the key up in a map of pointers, store) and with
// time.Now alone, in alternating chunks of 1000 calls so that all three see
// the same machine load. It reports each one's ns/op and keyed/floor.
func BenchmarkKeyedVsFloor(b *testing.B) {
	b.Run("keys=100000", func(b *testing.B) {
		const chunk = 1000
		keys := benchKeys(100_000, false)
		ctx := context.Background()
		k, _ := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{Rate: 1e9, Burst: 1 << 20, IdleTTL: time.Hour})
		type state struct{ at int64 }
		m := make(map[string]*state, len(keys))
		for _, key := range keys {
			_ = k.Wait(ctx, key)
			m[key] = &state{}
		}
		var mu sync.Mutex
		var sink int64
		ki, fi := 0, 0
		var keyed, floor, now time.Duration
		for b.Loop() {
			start := time.Now()
			for range chunk {
				if err := k.Wait(ctx, keys[ki]); err != nil {
					b.Fatal(err)
				}
				if ki++; ki == len(keys) {
					ki = 0
				}
			}
			t1 := time.Now()
			for range chunk {
				at := time.Now().UnixNano()
				mu.Lock()
				m[keys[fi]].at = at
				mu.Unlock()
				if fi++; fi == len(keys) {
					fi = 0
				}
			}
			t2 := time.Now()
			for range chunk {
				sink += time.Now().UnixNano()
			}
			keyed += t1.Sub(start)
			floor += t2.Sub(t1)
			now += time.Since(t2)
		}
		calls := float64(b.N * chunk)
		b.ReportMetric(0, "ns/op")
		b.ReportMetric(float64(keyed)/calls, "keyed-ns/op")
		b.ReportMetric(float64(floor)/calls, "floor-ns/op")
		b.ReportMetric(float64(now)/calls, "now-ns/op")
		b.ReportMetric(float64(keyed)/float64(floor), "ratio")
		_ = sink
	})
}

func benchKeys(n int, shuffled bool) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("account-%d", i)
	}
	if shuffled {
		rand.Shuffle(n, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	}
	return keys
}

// BenchmarkBucketVsXRate runs Bucket and x/time/rate in alternating chunks
// of 1000 calls (taking turns going first), so that both see the same
// machine load, and reports each one's ns/op and their ratio (bucket/xrate).
func BenchmarkBucketVsXRate(b *testing.B) {
	ctx := context.Background()
	for _, bc := range []struct {
		name   string
		bucket func(*ratelimit.Bucket) bool
		xrate  func(*rate.Limiter) bool
	}{
		{"Allow", (*ratelimit.Bucket).Allow, (*rate.Limiter).Allow},
		{"Wait",
			func(bk *ratelimit.Bucket) bool { return bk.Wait(ctx) == nil },
			func(l *rate.Limiter) bool { return l.Wait(ctx) == nil }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			bk, _ := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: benchRate, Burst: benchBurst})
			lim := rate.NewLimiter(benchRate, benchBurst)
			const chunk = 1000
			var ours, theirs time.Duration
			runBucket := func() time.Duration {
				start := time.Now()
				for range chunk {
					if !bc.bucket(bk) {
						b.Fatal("not allowed")
					}
				}
				return time.Since(start)
			}
			runXRate := func() time.Duration {
				start := time.Now()
				for range chunk {
					if !bc.xrate(lim) {
						b.Fatal("not allowed")
					}
				}
				return time.Since(start)
			}
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 { // alternate which goes first
					ours += runBucket()
					theirs += runXRate()
				} else {
					theirs += runXRate()
					ours += runBucket()
				}
			}
			calls := float64(b.N * chunk)
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(float64(ours)/calls, "bucket-ns/op")
			b.ReportMetric(float64(theirs)/calls, "xrate-ns/op")
			b.ReportMetric(float64(ours)/float64(theirs), "ratio")
		})
	}
}
