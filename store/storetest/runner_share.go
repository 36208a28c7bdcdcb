package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// testRunnersShare runs two pacer Runners, the instances of one service,
// the first on Harness.Store and the second on its Twin, and checks that the
// Runner's guarantees hold across them. In strict mode, values of 20 keys
// added at either instance run one key at a time across both, with growing
// fences, and each key's values succeed in Add order although some fail
// once, with Config.AckInBackground or not; values of one key added at both
// within the quiet period run as one batch; and an instance whose Shutdown
// gives up mid-lease leaves its batch to the other at once, at the same
// attempt. Each runs as a subtest; at the end no state is left in their
// queues.
func testRunnersShare(f *fixture) {
	t, s1, s2 := f.t, f.s, f.twin
	for _, background := range []bool{false, true} {
		name, queue := "order and exclusivity", f.other("strict")
		if background {
			name, queue = "order and exclusivity, Acks in the background", f.other("strict-bg")
		}
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, 300, func(ctx context.Context, _ int, _ string, batch []int) error {
				time.Sleep(time.Duration(batch[0]%3) * time.Millisecond)
				if batch[0]%7 == 0 && pacer.Attempt(ctx) == 1 {
					return errors.New("transient")
				}
				return nil
			})
			cfg := pacer.Config[string, int]{Store: s1, Name: queue, MaxBatch: 1, Workers: 3, AckInBackground: background,
				LeaseTTL: 2 * time.Second, Retry: pacer.Backoff{Initial: 10 * time.Millisecond}}
			r1, r2 := StartPair(t, cfg, s2, c.handler(1), c.handler(2))
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
	}

	t.Run("debounce across instances", func(t *testing.T) {
		c := newCluster(t, 3, nil)
		cfg := pacer.Config[string, int]{Store: s1, Name: f.other("debounce"), Debounce: 300 * time.Millisecond, MaxWait: 2 * time.Second}
		r1, r2 := StartPair(t, cfg, s2, c.handler(1), c.handler(2))
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
		cfg := pacer.Config[string, int]{Store: s1, Name: f.other("handover"), LeaseTTL: time.Minute,
			OnDrop: func(string, []int, error) { t.Error("OnDrop called") }}
		r1, err := pacer.New(cfg, c.handler(1))
		require.NoError(t, err)
		done1 := make(chan error, 1)
		go func() { done1 <- r1.Run(context.Background()) }()
		require.NoError(t, r1.Add(t.Context(), "k", 1))
		require.Equal(t, 1, <-attempts) // r1 holds k
		cfg.Store = s2
		r2, err := pacer.New(cfg, c.handler(2))
		require.NoError(t, err)
		StartRunner(t, r2)

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

	for _, q := range []string{"strict", "strict-bg", "debounce", "handover"} {
		st, err := s1.Stats(context.Background(), f.other(q))
		require.NoError(t, err)
		require.Equal(t, store.Stats{}, st, "queue %s: every value handled, no state left", q)
	}
}
