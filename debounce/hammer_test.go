package debounce

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHammer runs Adds, AddWaits and Flushes from several goroutines on the
// real clock with a short Wait, then shuts down. Every value must be delivered
// exactly once, each goroutine's values for a key in Add order, and fire
// must never run twice at once.
func TestHammer(t *testing.T) {
	const (
		workers = 4
		adds    = 2000
		keys    = 16
	)
	var (
		running atomic.Int32
		mu      sync.Mutex
		got     = map[int][]int{} // key -> values, in fire order
	)
	k, err := New(Config{Wait: time.Millisecond, MaxWait: 3 * time.Millisecond, MaxItems: 50},
		func(key int, b Burst[int]) {
			// assert, not require: this runs on the debouncer's goroutine.
			assert.Equal(t, int32(1), running.Add(1), "fire ran concurrently")
			defer running.Add(-1)
			assert.Len(t, b.Values, b.Count)
			assert.False(t, b.Last.Before(b.First))
			mu.Lock()
			got[key] = append(got[key], b.Values...)
			mu.Unlock()
		})
	require.NoError(t, err)

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range adds {
				key := (i*7 + w) % keys
				if i%3 == 0 {
					// Quiet periods of their own, shorter and longer than Wait.
					require.NoError(t, k.AddWait(key, w*adds+i, time.Duration(i%4)*time.Millisecond/2+time.Microsecond))
				} else {
					require.NoError(t, k.Add(key, w*adds+i))
				}
				switch i % 97 {
				case 0:
					k.Flush(key)
				case 1:
					_ = k.Pending()
				}
			}
		})
	}
	wg.Wait()
	require.NoError(t, k.Shutdown(context.Background()))
	require.NoError(t, k.Shutdown(context.Background()))

	total := 0
	for key, vals := range got {
		last := map[int]int{} // worker -> last value seen
		for _, v := range vals {
			w := v / adds
			require.Equal(t, key, (v%adds*7+w)%keys, "value %d under key %d", v, key)
			if prev, ok := last[w]; ok {
				require.Greater(t, v, prev, "key %d: worker %d out of order", key, w)
			}
			last[w] = v
		}
		total += len(vals)
	}
	require.Equal(t, workers*adds, total)
}
