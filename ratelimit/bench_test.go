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

// BenchmarkKeyedFloor is what any keyed limiter must pay on this machine:
// read the clock, lock, look the key up in a map of pointers. Compare
// BenchmarkKeyedWait with it.
func BenchmarkKeyedFloor(b *testing.B) {
	b.Run("keys=100000", func(b *testing.B) {
		type state struct{ at int64 }
		keys := benchKeys(100_000, false)
		m := make(map[string]*state, len(keys))
		for _, key := range keys {
			m[key] = &state{}
		}
		var mu sync.Mutex
		i := 0
		for b.Loop() {
			now := time.Now().UnixNano()
			mu.Lock()
			m[keys[i]].at = now
			mu.Unlock()
			if i++; i == len(keys) {
				i = 0
			}
		}
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
