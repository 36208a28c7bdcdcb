package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// Two pacer Runners, the instances of one service, each on a Store and a
// pool of its own on one schema: the Runner's guarantees hold across
// them. In strict mode, values of 20 keys added at either instance run one
// key at a time across both, with growing fences, and each key's values
// succeed in Add order although some fail once; values of one key added at
// both within the quiet period run as one batch; an instance whose
// Shutdown gives up mid-lease leaves its batch to the other at once, at
// the same attempt; and a holder whose lease lapsed is cancelled with
// ErrLeaseLost while the batch runs again under a larger fence.
func TestRunnersSharePostgres(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t, connect(t, appName(t)))
	s1, s2 := instance(t, schema), instance(t, schema)

	t.Run("order and exclusivity", func(t *testing.T) {
		c := newCluster(t, 300, func(ctx context.Context, _ int, _ string, batch []int) error {
			time.Sleep(time.Duration(batch[0]%3) * time.Millisecond)
			if batch[0]%7 == 0 && pacer.Attempt(ctx) == 1 {
				return errors.New("transient")
			}
			return nil
		})
		cfg := pacer.Config[string, int]{Name: "strict", MaxBatch: 1, Workers: 3,
			LeaseTTL: 2 * time.Second, Retry: pacer.Backoff{Initial: 10 * time.Millisecond}}
		cfg.Store = s1
		r1, err := pacer.New(cfg, c.handler(1))
		require.NoError(t, err)
		cfg.Store = s2
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
		cfg := pacer.Config[string, int]{Store: s1, Name: "debounce", Debounce: 300 * time.Millisecond, MaxWait: 2 * time.Second}
		r1, err := pacer.New(cfg, c.handler(1))
		require.NoError(t, err)
		cfg.Store = s2
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
		cfg := pacer.Config[string, int]{Store: s1, Name: "handover", LeaseTTL: time.Minute,
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

	t.Run("a lapsed lease is fenced off", func(t *testing.T) {
		// Not a cluster's handler: once a lease lapsed, the stale holder
		// runs until it hears so, and may overlap the next.
		type run struct {
			fence uint64
			cause error // of the stale holder's ctx
		}
		runs := make(chan run, 3)
		var calls atomic.Int32
		h := func(ctx context.Context, _ string, _ []int) error {
			fence, _ := pacer.Fence(ctx)
			runs <- run{fence: fence}
			if calls.Add(1) > 1 {
				return nil
			}
			<-ctx.Done() // the stale holder stops when its renewal is refused
			runs <- run{fence: fence, cause: context.Cause(ctx)}
			return ctx.Err()
		}
		cfg := pacer.Config[string, int]{Store: s1, Name: "fenced", LeaseTTL: 600 * time.Millisecond,
			OnDrop: func(string, []int, error) { t.Error("OnDrop called") }}
		r1, err := pacer.New(cfg, h)
		require.NoError(t, err)
		cfg.Store = s2
		r2, err := pacer.New(cfg, h)
		require.NoError(t, err)
		start(t, r1)
		start(t, r2)
		require.NoError(t, r1.Add(t.Context(), "k", 1))
		first := <-runs
		// The holder's process stalls past its lease, as far as the store
		// can tell: the lease lapses, and an instance takes the key again.
		_, err = connect(t, appName(t)).Exec(t.Context(),
			"UPDATE "+pgx.Identifier{schema, "keys"}.Sanitize()+" SET leased_until = now() - interval '1 second', ready_at = now() - interval '1 second' WHERE queue = 'fenced'")
		require.NoError(t, err)
		var again, stale run
		for range 2 {
			select {
			case r := <-runs:
				if r.cause != nil {
					stale = r
				} else {
					again = r
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the lapsed lease was not taken again, or its holder not stopped")
			}
		}
		require.Greater(t, again.fence, first.fence, "the next lease has a larger fence")
		require.Equal(t, first.fence, stale.fence)
		require.ErrorIs(t, stale.cause, pacer.ErrLeaseLost)
		require.Eventually(t, func() bool {
			st, err := s1.Stats(t.Context(), "fenced")
			return err == nil && st == store.Stats{}
		}, 5*time.Second, 5*time.Millisecond, "the value was acked once, by the new holder")
		require.Equal(t, int32(2), calls.Load())
	})

	for _, q := range []string{"strict", "debounce", "handover", "fenced"} {
		st, err := s1.Stats(context.Background(), q)
		require.NoError(t, err)
		require.Equal(t, store.Stats{}, st, "queue %s: every value handled, no state left", q)
	}
}

// Runners on PostgreSQL retry a failing batch, drop one that failed for
// good or used up its attempts, and keep what they drop as dead letters,
// which another instance lists, typed, redrives to the key's tail and
// purges; a dead letter whose values no longer decode is listed with its
// bytes.
func TestRunnerRetriesAndDeadLettersOnPostgres(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	schema := freshSchema(t, connect(t, appName(t)))
	s1, s2 := instance(t, schema), instance(t, schema)
	c := newCluster(t, 3, func(ctx context.Context, inst int, _ string, batch []int) error {
		switch {
		case inst == 1 && batch[0] < 0:
			return pacer.Permanent(errors.New("refused"))
		case batch[0] == 2 && pacer.Attempt(ctx) < 3:
			return errors.New("transient")
		case batch[0] == 9:
			return errors.New("never")
		}
		return nil
	})
	dropped := make(chan error, 3)
	cfg := pacer.Config[string, int]{Store: s1, Name: "dead", MaxBatch: 1,
		Retry:  pacer.Backoff{Initial: 10 * time.Millisecond, Attempts: 3},
		OnDrop: func(_ string, _ []int, err error) { dropped <- err }}
	r1, err := pacer.New(cfg, c.handler(1))
	require.NoError(t, err)
	start(t, r1)
	require.NoError(t, s1.Add(ctx, "dead", "k", [][]byte{[]byte(`"x"`)}, store.AddParams{}))
	for _, v := range []int{-1, 2, 9, 4} {
		require.NoError(t, r1.Add(ctx, "k", v))
	}
	for range 3 {
		select {
		case <-dropped:
		case <-time.After(10 * time.Second):
			t.Fatal("no drop")
		}
	}

	cfg.Store = s2
	r2, err := pacer.New(cfg, c.handler(2)) // another instance, not running
	require.NoError(t, err)
	// OnDrop runs before the engine keeps the batch: wait for all three.
	var dead []pacer.DeadLetter[string, int]
	require.Eventually(t, func() bool {
		dead, err = r2.DeadLetters(ctx, 0, 10)
		require.NoError(t, err)
		return len(dead) == 3
	}, 5*time.Second, time.Millisecond)
	require.ErrorIs(t, dead[0].DecodeErr, pacer.ErrUndecodable)
	require.Equal(t, [][]byte{[]byte(`"x"`)}, dead[0].Raw.Values)
	require.Equal(t, []int{-1}, dead[1].Values)
	require.Equal(t, "permanent: refused", dead[1].Err)
	require.Equal(t, 1, dead[1].Attempt)
	require.WithinDuration(t, time.Now(), dead[1].At, 5*time.Second)
	require.Equal(t, []int{9}, dead[2].Values)
	require.Equal(t, "never", dead[2].Err)
	require.Equal(t, 3, dead[2].Attempt)

	// Redriven while r1 still runs, -1 is refused again; r1 stops, so r2,
	// whose handler accepts it, must be the one to take it.
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, r1.Shutdown(stopCtx))
	start(t, r2)
	ok, err := r2.Redrive(ctx, dead[1].ID)
	require.NoError(t, err)
	require.True(t, ok)
	c.wait(5 * time.Second)
	c.mu.Lock()
	require.Equal(t, []int{2, 4, -1}, c.done["k"], "2 succeeded at its third attempt, in order")
	c.mu.Unlock()

	n, err := r2.Purge(ctx, time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	dead, err = r2.DeadLetters(ctx, 0, 10)
	require.NoError(t, err)
	require.Empty(t, dead)
}
