package pacer_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// failing is a store whose Extend fails with extendErr, and which counts
// the Finish calls it passes on.
type failing struct {
	store.Store
	extendErr error
	finishes  atomic.Int32
}

func (s *failing) Extend(context.Context, store.Lease, time.Duration) error { return s.extendErr }

func (s *failing) Finish(ctx context.Context, l store.Lease, o store.Outcome) (bool, error) {
	s.finishes.Add(1)
	return s.Store.Finish(ctx, l, o)
}

// A handler that outlives its lease because the renewals fail has its ctx
// cancelled with ErrLeaseLost, and the Runner reports nothing for the
// batch: the lease lapses and the batch runs again, as the next attempt,
// under a larger fence. A refused renewal cancels at once; failing ones
// cancel at the lease's deadline: the TTL less its margin (TTL/10 + 10 ms)
// after the claim was sent.
func TestLeaseLostCancelsHandler(t *testing.T) {
	for _, tc := range []struct {
		name      string
		extendErr error
		after     time.Duration // when the handler's ctx ends
		says      string
	}{
		{"refused", store.ErrLeaseLost, time.Second, "pacer: lease lost"},
		{"failing", errors.New("connection refused"), 2690 * time.Millisecond, "pacer: lease lost: no renewal succeeded for 2.69s, the LeaseTTL 3s less its margin of 310ms: connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &failing{Store: store.NewMemory(store.MemoryConfig{}), extendErr: tc.extendErr}
				t0 := time.Now()
				var mu sync.Mutex
				var causes []error
				var ended []time.Duration
				var attempts []int
				var fences []uint64
				r, err := pacer.New(pacer.Config[string, int]{Store: st, Name: "q", LeaseTTL: 3 * time.Second},
					func(ctx context.Context, _ string, _ []int) error {
						f, _ := pacer.Fence(ctx)
						mu.Lock()
						attempts, fences = append(attempts, pacer.Attempt(ctx)), append(fences, f)
						first := len(attempts) == 1
						mu.Unlock()
						if !first {
							return nil
						}
						<-ctx.Done()
						mu.Lock()
						causes, ended = append(causes, context.Cause(ctx)), append(ended, time.Since(t0))
						mu.Unlock()
						return ctx.Err()
					})
				require.NoError(t, err)
				require.NoError(t, r.Add(t.Context(), "k", 1))
				stop := runAll(t, r)
				time.Sleep(2750 * time.Millisecond)
				mu.Lock()
				defer mu.Unlock()
				require.Equal(t, []time.Duration{tc.after}, ended)
				require.ErrorIs(t, causes[0], pacer.ErrLeaseLost)
				require.ErrorIs(t, causes[0], store.ErrLeaseLost)
				require.EqualError(t, causes[0], tc.says)
				require.Zero(t, st.finishes.Load(), "no outcome reported for a lost lease")

				mu.Unlock()
				time.Sleep(time.Second) // the lease lapsed at 3 s: k runs again
				stop()
				mu.Lock()
				require.Equal(t, []int{1, 2}, attempts)
				require.Greater(t, fences[1], fences[0])
				require.Equal(t, int32(1), st.finishes.Load(), "the Ack of the second lease")
				s := stats(t, r)
				require.Equal(t, uint64(1), s.Handled)
				require.Zero(t, s.Retries)
				require.Zero(t, s.Values)
			})
		})
	}
}

// A batch leased again after its last attempt lapsed (its holder died) is
// given up without calling the handler, as Config.Exhausted says.
func TestLeaseLapsedOnLastAttempt(t *testing.T) {
	for _, policy := range []pacer.Exhausted{pacer.ExhaustedDrop, pacer.ExhaustedHold} {
		synctest.Test(t, func(t *testing.T) {
			ctx := t.Context()
			mem := store.NewMemory(store.MemoryConfig{})
			require.NoError(t, mem.Add(ctx, "q", "k", [][]byte{[]byte("1")}, store.AddParams{}))
			for range 2 { // a holder that dies on each of the 2 attempts
				ls, _, err := mem.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: time.Second})
				require.NoError(t, err)
				require.Len(t, ls, 1)
				time.Sleep(time.Second)
			}
			var dropped []error
			r, err := pacer.New(pacer.Config[string, int]{
				Store: mem, Name: "q", Retry: pacer.Backoff{Attempts: 2}, Exhausted: policy,
				OnDrop: func(key string, batch []int, err error) {
					assert.Equal(t, "k", key)
					assert.Equal(t, []int{1}, batch)
					dropped = append(dropped, err)
				},
			}, func(context.Context, string, []int) error {
				t.Error("the handler was called")
				return nil
			})
			require.NoError(t, err)
			stop := runAll(t, r)
			stop()
			s := stats(t, r)
			if policy == pacer.ExhaustedHold {
				require.Empty(t, dropped)
				require.Equal(t, 1, s.Held)
				return
			}
			require.Len(t, dropped, 1)
			require.ErrorIs(t, dropped[0], pacer.ErrLeaseLost)
			require.EqualError(t, dropped[0], "pacer: lease lost: attempt 2 of 2 lapsed, its holder gone")
			dead, err := mem.DeadLetters(ctx, "q", 0, 10)
			require.NoError(t, err)
			require.Len(t, dead, 1)
			require.Equal(t, dropped[0].Error(), dead[0].Err)
			require.Equal(t, 1, s.Dead)
		})
	}
}

// Fence gives a handler its lease's token on a store, growing with each
// lease of a key; without a store, and outside a handler, there is none.
func TestFence(t *testing.T) {
	_, ok := pacer.Fence(context.Background())
	require.False(t, ok)
	bothPaths(t, func(t *testing.T, on path) {
		var fences []uint64
		var oks []bool
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error {
			f, ok := pacer.Fence(ctx)
			fences, oks = append(fences, f), append(oks, ok)
			if pacer.Attempt(ctx) == 1 {
				return errors.New("again")
			}
			return nil
		})
		cfg := on(pacer.Config[string, int]{MaxBatch: 1, Retry: pacer.Backoff{Initial: time.Second}})
		r := newRunner(t, cfg, rc)
		for i := range 3 {
			require.NoError(t, r.Add(t.Context(), "k", i))
		}
		stop := start(t, r)
		time.Sleep(time.Minute)
		stop()
		require.Len(t, fences, 6)
		if cfg.Store == nil {
			require.Equal(t, []bool{false, false, false, false, false, false}, oks)
			require.Equal(t, []uint64{0, 0, 0, 0, 0, 0}, fences)
			return
		}
		require.Equal(t, []bool{true, true, true, true, true, true}, oks)
		require.IsIncreasing(t, fences)
	})
}
