package pacer_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/pacerkit/pacer"
)

// BenchmarkRunner measures the Runner's own overhead per value: values over
// 10,000 keys, added by one goroutine while the workers run a no-op handler,
// no debounce, then a graceful Shutdown. One op is one value; calls/op is
// the number of handler calls per value (1 in strict mode, less when
// coalescing).
func BenchmarkRunner(b *testing.B) {
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	for _, mode := range []struct {
		name     string
		maxBatch int
	}{{"coalesce", 0}, {"strict", 1}} {
		b.Run(mode.name, func(b *testing.B) {
			ctx := context.Background()
			running := make(chan struct{})
			var once sync.Once
			r, err := pacer.New(pacer.Config[string, int]{MaxBatch: mode.maxBatch, Workers: 2},
				func(context.Context, string, []int) error {
					once.Do(func() { close(running) })
					return nil
				})
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			// Wait until Run runs, so the workers handle values while they are added.
			if err := r.Add(ctx, "warm-up", -1); err != nil {
				b.Fatal(err)
			}
			<-running
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := r.Add(ctx, keys[i%len(keys)], i); err != nil {
					b.Fatal(err)
				}
			}
			if err := r.Shutdown(ctx); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			st, err := r.Stats(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if st.Handled != uint64(b.N)+1 {
				b.Fatalf("handled %d of %d values", st.Handled, b.N+1)
			}
			b.ReportMetric(float64(st.Batches-1)/float64(b.N), "calls/op")
		})
	}
}
