package ratelimit_test

import (
	"context"
	"fmt"
	"math/rand/v2"
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

// BenchmarkKeyedWait waits on keys drawn at random from a set of the given
// size, all of which already have a bucket (steady state).
func BenchmarkKeyedWait(b *testing.B) {
	for _, n := range []int{100_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			k, _ := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{Rate: 1e9, Burst: 1 << 20, IdleTTL: time.Hour})
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("account-%d", i)
			}
			ctx := context.Background()
			for _, key := range keys {
				_ = k.Wait(ctx, key)
			}
			order := rand.Perm(n)
			i := 0
			for b.Loop() {
				if err := k.Wait(ctx, keys[order[i]]); err != nil {
					b.Fatal(err)
				}
				if i++; i == n {
					i = 0
				}
			}
		})
	}
}
