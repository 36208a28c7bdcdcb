package storetest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// cluster is a service of several pacer Runners, its instances, on one
// store. Its handler checks that a key never runs on two instances at once
// and that each lease of a key has a larger fence, and records the values
// handled successfully.
type cluster struct {
	t  *testing.T
	fn func(ctx context.Context, inst int, key string, batch []int) error

	mu      sync.Mutex
	busy    map[string]int
	fences  map[string]uint64
	done    map[string][]int
	batches [][]int
	by      map[int]int
	count   int
	reached chan struct{} // closed when count reaches want
	want    int
}

func newCluster(t *testing.T, want int, fn func(ctx context.Context, inst int, key string, batch []int) error) *cluster {
	return &cluster{t: t, fn: fn, busy: map[string]int{}, fences: map[string]uint64{}, done: map[string][]int{},
		by: map[int]int{}, reached: make(chan struct{}), want: want}
}

func (c *cluster) handler(inst int) pacer.Handler[string, int] {
	return func(ctx context.Context, key string, batch []int) error {
		fence, ok := pacer.Fence(ctx)
		c.mu.Lock()
		assert.True(c.t, ok)
		assert.Zero(c.t, c.busy[key], "key %s runs on instances %d and %d at once", key, c.busy[key], inst)
		assert.Greater(c.t, fence, c.fences[key], "key %s: the fence grows with each lease", key)
		c.busy[key], c.fences[key] = inst, fence
		c.mu.Unlock()
		var err error
		if c.fn != nil {
			err = c.fn(ctx, inst, key, batch)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.busy[key] = 0
		if err == nil {
			c.done[key] = append(c.done[key], batch...)
			c.batches = append(c.batches, slices.Clone(batch))
			c.by[inst]++
			if c.count += len(batch); c.count == c.want {
				close(c.reached)
			}
		}
		return err
	}
}

// wait waits, at most d, until the cluster handled the values it wants.
func (c *cluster) wait(d time.Duration) {
	c.t.Helper()
	select {
	case <-c.reached:
	case <-time.After(d):
		c.mu.Lock()
		defer c.mu.Unlock()
		c.t.Fatalf("handled %d of %d values in %v", c.count, c.want, d)
	}
}

// StartRunner runs r until the test ends, then shuts it down and checks
// that both Shutdown and Run returned nil.
func StartRunner[K comparable, V any](t testing.TB, r *pacer.Runner[K, V]) {
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, r.Shutdown(ctx))
		assert.NoError(t, <-done)
	})
}

// StartPair makes two Runners of cfg, two instances of one service: the
// first on cfg.Store with handler h1, the second on s2 with h2; it runs
// both until the test ends (see StartRunner).
func StartPair(t *testing.T, cfg pacer.Config[string, int], s2 store.Store, h1, h2 pacer.Handler[string, int]) (r1, r2 *pacer.Runner[string, int]) {
	t.Helper()
	r1, err := pacer.New(cfg, h1)
	require.NoError(t, err)
	cfg.Store = s2
	r2, err = pacer.New(cfg, h2)
	require.NoError(t, err)
	StartRunner(t, r1)
	StartRunner(t, r2)
	return r1, r2
}
