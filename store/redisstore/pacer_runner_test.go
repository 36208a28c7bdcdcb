package redisstore_test

import (
	"context"
	"errors"
	"fmt"
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

// start runs r until the test ends.
func start(t *testing.T, r *pacer.Runner[string, int]) {
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, r.Shutdown(ctx))
		assert.NoError(t, <-done)
	})
}

// Two pacer Runners, the instances of one service, on one Redis: the
// Runner's guarantees hold across them. In strict mode, values of 20 keys
// added at either instance run one key at a time across both, with
// growing fences, and each key's values succeed in Add order although some
// fail once; values of one key added at both within the quiet period run
// as one batch; and an instance whose Shutdown gives up mid-lease leaves
// its batch to the other at once, at the same attempt.
func TestRunnersShareRedis(t *testing.T) {
	s, _, _ := newStore(t)
	t.Run("order and exclusivity", func(t *testing.T) {
		c := newCluster(t, 300, func(ctx context.Context, _ int, _ string, batch []int) error {
			time.Sleep(time.Duration(batch[0]%3) * time.Millisecond)
			if batch[0]%7 == 0 && pacer.Attempt(ctx) == 1 {
				return errors.New("transient")
			}
			return nil
		})
		cfg := pacer.Config[string, int]{Store: s, Name: "strict", MaxBatch: 1, Workers: 3,
			LeaseTTL: 2 * time.Second, Retry: pacer.Backoff{Initial: 10 * time.Millisecond}}
		r1, err := pacer.New(cfg, c.handler(1))
		require.NoError(t, err)
		r2, err := pacer.New(cfg, c.handler(2))
		require.NoError(t, err)
		start(t, r1)
		start(t, r2)
		want := map[string][]int{}
		for i := range 300 {
			key := fmt.Sprint("k", i*7%20)
			want[key] = append(want[key], i)
			require.NoError(t, []*pacer.Runner[string, int]{r1, r2}[i*i%2].Add(t.Context(), key, i))
		}
		c.wait(30 * time.Second)
		c.mu.Lock()
		defer c.mu.Unlock()
		require.Equal(t, want, c.done)
		require.Positive(t, c.by[1])
		require.Positive(t, c.by[2])
	})

	t.Run("debounce across instances", func(t *testing.T) {
		c := newCluster(t, 3, nil)
		cfg := pacer.Config[string, int]{Store: s, Name: "debounce", Debounce: 300 * time.Millisecond, MaxWait: 2 * time.Second}
		r1, err := pacer.New(cfg, c.handler(1))
		require.NoError(t, err)
		r2, err := pacer.New(cfg, c.handler(2))
		require.NoError(t, err)
		start(t, r1)
		start(t, r2)
		t0 := time.Now()
		require.NoError(t, r1.Add(t.Context(), "u", 1))
		require.NoError(t, r2.Add(t.Context(), "u", 2))
		require.NoError(t, r1.Add(t.Context(), "u", 3))
		c.wait(5 * time.Second)
		require.GreaterOrEqual(t, time.Since(t0), 300*time.Millisecond)
		c.mu.Lock()
		defer c.mu.Unlock()
		require.Equal(t, [][]int{{1, 2, 3}}, c.batches)
	})

	t.Run("shutdown hands the lease over", func(t *testing.T) {
		var cause error
		attempts := make(chan int, 2)
		c := newCluster(t, 1, func(ctx context.Context, inst int, _ string, _ []int) error {
			attempts <- pacer.Attempt(ctx)
			if inst == 1 {
				<-ctx.Done()
				cause = context.Cause(ctx)
				return ctx.Err()
			}
			return nil
		})
		cfg := pacer.Config[string, int]{Store: s, Name: "handover", LeaseTTL: time.Minute,
			OnDrop: func(string, []int, error) { t.Error("OnDrop called") }}
		r1, err := pacer.New(cfg, c.handler(1))
		require.NoError(t, err)
		done1 := make(chan error, 1)
		go func() { done1 <- r1.Run(context.Background()) }()
		require.NoError(t, r1.Add(t.Context(), "k", 1))
		require.Equal(t, 1, <-attempts) // r1 holds k
		r2, err := pacer.New(cfg, c.handler(2))
		require.NoError(t, err)
		start(t, r2)

		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		require.ErrorIs(t, r1.Shutdown(ctx), context.DeadlineExceeded)
		require.NoError(t, <-done1)
		require.ErrorIs(t, cause, pacer.ErrClosed)
		require.Equal(t, 1, <-attempts, "a deferred batch keeps its attempt")
		c.wait(5 * time.Second)
		require.Less(t, time.Since(t0), 5*time.Second, "taken at once, not after the lease's minute")
		c.mu.Lock()
		defer c.mu.Unlock()
		require.Equal(t, map[int]int{2: 1}, c.by)
	})

	st, err := s.Stats(context.Background(), "strict")
	require.NoError(t, err)
	require.Equal(t, store.Stats{}, st, "every value handled, no state left")
}
