package ratelimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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

// BenchmarkBucketVsXRate runs Bucket and x/time/rate side by side; see
// compare.
func BenchmarkBucketVsXRate(b *testing.B) {
	ctx := context.Background()
	b.Run("Allow", func(b *testing.B) {
		bk, _ := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: benchRate, Burst: benchBurst})
		lim := rate.NewLimiter(benchRate, benchBurst)
		compare(b, []string{"bucket", "xrate"},
			func() bool { return bk.Allow() },
			func() bool { return lim.Allow() })
	})
	b.Run("Wait", func(b *testing.B) {
		bk, _ := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: benchRate, Burst: benchBurst})
		lim := rate.NewLimiter(benchRate, benchBurst)
		compare(b, []string{"bucket", "xrate"},
			func() bool { return bk.Wait(ctx) == nil },
			func() bool { return lim.Wait(ctx) == nil })
	})
}

// BenchmarkKeyedVsFloor runs Keyed.Wait on 100000 keys, cycled in order,
// side by side with the floor any keyed limiter pays on this machine: read
// the clock, lock, look the key up in a map of pointers, store. See compare.
func BenchmarkKeyedVsFloor(b *testing.B) {
	b.Run("keys=100000", func(b *testing.B) {
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
		ki, fi := 0, 0
		compare(b, []string{"keyed", "floor"},
			func() bool {
				err := k.Wait(ctx, keys[ki])
				if ki++; ki == len(keys) {
					ki = 0
				}
				return err == nil
			},
			func() bool {
				at := time.Now().UnixNano()
				mu.Lock()
				m[keys[fi]].at = at
				mu.Unlock()
				if fi++; fi == len(keys) {
					fi = 0
				}
				return true
			})
	})
}

// compare runs two implementations in alternating chunks of 1000 calls,
// taking turns going first, so that both see the same machine load. It
// reports each one's ns/op (from the totals) and "ratio", the median over
// rounds of first/second, which ignores rounds hit by preemption.
func compare(b *testing.B, names []string, first, second func() bool) {
	const chunk = 1000
	run := func(f func() bool) time.Duration {
		start := time.Now()
		for range chunk {
			if !f() {
				b.Fatal("not allowed")
			}
		}
		return time.Since(start)
	}
	ratios := make([]float64, 0, 1<<20)
	var d1, d2 time.Duration
	for i := 0; b.Loop(); i++ {
		var x, y time.Duration
		if i%2 == 0 {
			x = run(first)
			y = run(second)
		} else {
			y = run(second)
			x = run(first)
		}
		d1 += x
		d2 += y
		if len(ratios) < cap(ratios) {
			ratios = append(ratios, float64(x)/float64(y))
		}
	}
	slices.Sort(ratios)
	calls := float64(b.N * chunk)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(d1)/calls, names[0]+"-ns/op")
	b.ReportMetric(float64(d2)/calls, names[1]+"-ns/op")
	b.ReportMetric(ratios[len(ratios)/2], "ratio")
}
