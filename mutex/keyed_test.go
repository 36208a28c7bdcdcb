package mutex_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pacerkit/pacer/mutex"
	"github.com/stretchr/testify/require"
)

// recorder collects the order in which goroutines acquired a key.
type recorder struct {
	mu  sync.Mutex
	ids []int
}

func (r *recorder) add(id int) {
	r.mu.Lock()
	r.ids = append(r.ids, id)
	r.mu.Unlock()
}

// take returns and clears what was recorded so far.
func (r *recorder) take() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := r.ids
	r.ids = nil
	return ids
}

func TestKeyedZeroValueLocksAndFrees(t *testing.T) {
	var m mutex.Keyed[string]
	require.Equal(t, 0, m.Len())
	m.Lock("a")
	require.Equal(t, 1, m.Len())
	require.False(t, m.TryLock("a"))
	require.True(t, m.TryLock("b"))
	require.Equal(t, 2, m.Len())
	m.Unlock("a")
	m.Unlock("b")
	require.Equal(t, 0, m.Len())
	require.True(t, m.TryLock("a"))
	m.Unlock("a")
	require.Equal(t, 0, m.Len())
}

func TestKeyedWaitersAcquireInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Keyed[string]
		var got recorder
		m.Lock("k")
		const n = 10
		for id := range n {
			go func() {
				if id%2 == 0 {
					m.Lock("k")
				} else {
					require.NoError(t, m.LockContext(context.Background(), "k"))
				}
				got.add(id)
			}()
			synctest.Wait() // queued before the next one starts
		}
		require.Empty(t, got.take())
		for id := range n {
			require.False(t, m.TryLock("k"), "TryLock must not overtake waiters")
			m.Unlock("k")
			synctest.Wait()
			require.Equal(t, []int{id}, got.take())
			require.Equal(t, 1, m.Len())
		}
		m.Unlock("k")
		require.Equal(t, 0, m.Len())
	})
}

func TestKeyedLockDoesNotBargePastWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Keyed[int]
		var got recorder
		m.Lock(1)
		go func() { m.Lock(1); got.add(1) }()
		synctest.Wait()
		go func() { m.Lock(1); got.add(2) }()
		synctest.Wait()
		// Unlock hands the key to waiter 1 directly: the key is never
		// free in between, so a TryLock right after cannot win.
		m.Unlock(1)
		require.False(t, m.TryLock(1))
		synctest.Wait()
		require.Equal(t, []int{1}, got.take())
		m.Unlock(1)
		synctest.Wait()
		require.Equal(t, []int{2}, got.take())
		m.Unlock(1)
		require.Equal(t, 0, m.Len())
	})
}

// TestKeyedDifferentKeysNeverBlock holds 64 keys with a waiter on each and
// checks that other keys stay free. Whatever the hashing, 64 keys in 32
// shards must share shards, so this covers keys that share internal state.
func TestKeyedDifferentKeysNeverBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Keyed[int]
		const n = 64
		for k := range n {
			m.Lock(k)
		}
		// With every key held and a waiter queued on each, a new key
		// is still free for Lock, TryLock, LockContext and Do.
		var got recorder
		for k := range n {
			go func() { m.Lock(k); got.add(k) }()
		}
		synctest.Wait()
		require.Empty(t, got.take())
		for k := n; k < 2*n; k++ {
			done := make(chan struct{})
			go func() {
				defer close(done)
				m.Lock(k)
				require.NoError(t, m.LockContext(context.Background(), k+n))
				require.True(t, m.TryLock(k+2*n))
				require.NoError(t, m.Do(context.Background(), k+3*n, func(context.Context) error { return nil }))
			}()
			synctest.Wait()
			select {
			case <-done:
			default:
				t.Fatalf("key %d blocked while only other keys were held", k)
			}
		}
		require.Equal(t, 4*n, m.Len())
		for k := range n {
			m.Unlock(k) // hands over to the waiter
			m.Unlock(k + n)
			m.Unlock(k + 2*n)
			m.Unlock(k + 3*n)
		}
		synctest.Wait()
		require.Len(t, got.take(), n)
		for k := range n {
			m.Unlock(k)
		}
		require.Equal(t, 0, m.Len())
	})
}

func TestKeyedUnlockOfUnlockedKeyPanics(t *testing.T) {
	var m mutex.Keyed[string]
	require.PanicsWithValue(t, "mutex: Unlock of unlocked key", func() { m.Unlock("never") })
	m.Lock("k")
	m.Unlock("k")
	require.PanicsWithValue(t, "mutex: Unlock of unlocked key", func() { m.Unlock("k") })
	require.Equal(t, 0, m.Len())
}

func TestKeyedLockContextCancelKeepsOthersInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Keyed[string]
		var got recorder
		m.Lock("k")
		cancels := make([]context.CancelFunc, 5)
		errs := make([]error, 5)
		var wg sync.WaitGroup
		for id := range 5 {
			ctx, cancel := context.WithCancel(context.Background())
			cancels[id] = cancel
			wg.Go(func() {
				if errs[id] = m.LockContext(ctx, "k"); errs[id] == nil {
					got.add(id)
				}
			})
			synctest.Wait()
		}
		// Give up at the head, in the middle and at the tail.
		for _, id := range []int{0, 2, 4} {
			cancels[id]()
		}
		synctest.Wait()
		for _, id := range []int{0, 2, 4} {
			require.ErrorIs(t, errs[id], context.Canceled)
		}
		require.Empty(t, got.take())
		m.Unlock("k")
		synctest.Wait()
		require.Equal(t, []int{1}, got.take())
		m.Unlock("k")
		synctest.Wait()
		require.Equal(t, []int{3}, got.take())
		m.Unlock("k")
		wg.Wait()
		require.Equal(t, 0, m.Len())
		for _, cancel := range cancels {
			cancel()
		}
	})
}

func TestKeyedLockContextCancelLeavesNoEntry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Keyed[string]
		m.Lock("k")
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err := m.LockContext(ctx, "k")
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.Equal(t, 1, m.Len())
		m.Unlock("k") // nobody waits any more: the key is free
		require.Equal(t, 0, m.Len())
		require.True(t, m.TryLock("k"))
		m.Unlock("k")
	})
}

func TestKeyedLockContextEndedFailsEvenWhenFree(t *testing.T) {
	var m mutex.Keyed[string]
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, m.LockContext(ctx, "k"), context.Canceled)
	require.Equal(t, 0, m.Len())
	called := false
	err := m.Do(ctx, "k", func(context.Context) error { called = true; return nil })
	require.ErrorIs(t, err, context.Canceled)
	require.False(t, called)
	require.Equal(t, 0, m.Len())
}

// TestKeyedCancelRacingHandOver ends a waiter's context at the moment the
// key is handed to it. Either outcome is allowed, but an error must mean
// the waiter does not hold the key: it is passed on to the next waiter.
func TestKeyedCancelRacingHandOver(t *testing.T) {
	var sawErr, sawNil bool
	for i := range 400 {
		synctest.Test(t, func(t *testing.T) {
			var m mutex.Keyed[string]
			var got recorder
			m.Lock("k")
			ctx, cancel := context.WithCancel(context.Background())
			var err error
			go func() {
				if err = m.LockContext(ctx, "k"); err == nil {
					got.add(1)
				}
			}()
			synctest.Wait()
			go func() { m.Lock("k"); got.add(2) }()
			synctest.Wait()
			if i%2 == 0 {
				m.Unlock("k")
				cancel()
			} else {
				cancel()
				m.Unlock("k")
			}
			synctest.Wait()
			if err != nil {
				sawErr = true
				require.ErrorIs(t, err, context.Canceled)
				require.Equal(t, []int{2}, got.take())
			} else {
				sawNil = true
				require.Equal(t, []int{1}, got.take())
				m.Unlock("k")
				synctest.Wait()
				require.Equal(t, []int{2}, got.take())
			}
			m.Unlock("k")
			require.Equal(t, 0, m.Len())
		})
	}
	t.Logf("outcomes seen: error=%v nil=%v", sawErr, sawNil)
}

func TestKeyedDoUnlocksOnReturnErrorAndPanic(t *testing.T) {
	var m mutex.Keyed[string]
	ctx := context.Background()
	type ctxKey struct{}
	vctx := context.WithValue(ctx, ctxKey{}, "v")

	err := m.Do(vctx, "k", func(ctx context.Context) error {
		require.Equal(t, "v", ctx.Value(ctxKey{}), "fn receives the caller's ctx")
		require.False(t, m.TryLock("k"), "fn runs with the key held")
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 0, m.Len())

	boom := errors.New("boom")
	err = m.Do(ctx, "k", func(context.Context) error { return boom })
	require.ErrorIs(t, err, boom)
	require.Equal(t, 0, m.Len())

	require.PanicsWithValue(t, "fn panicked", func() {
		_ = m.Do(ctx, "k", func(context.Context) error { panic("fn panicked") })
	})
	require.Equal(t, 0, m.Len())

	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = m.Do(ctx, "k", func(context.Context) error { runtime.Goexit(); return nil })
	}()
	<-done
	require.Equal(t, 0, m.Len())
	require.True(t, m.TryLock("k"))
	m.Unlock("k")
}

func TestKeyedDoWaitsItsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var m mutex.Keyed[string]
		var got recorder
		m.Lock("k")
		for id := range 3 {
			go func() {
				_ = m.Do(context.Background(), "k", func(context.Context) error {
					got.add(id)
					time.Sleep(time.Second) // fake time: hold the key a while
					return nil
				})
			}()
			synctest.Wait()
		}
		m.Unlock("k")
		synctest.Wait()
		require.Equal(t, []int{0}, got.take())
		time.Sleep(10 * time.Second)
		require.Equal(t, []int{1, 2}, got.take())
		require.Equal(t, 0, m.Len())
	})
}

// TestKeyedHammer mixes every operation from many goroutines on a few keys
// and checks, under -race, that no two holders of a key ever overlap and
// that all state is gone at the end.
func TestKeyedHammer(t *testing.T) {
	var m mutex.Keyed[int]
	const keys, goroutines, rounds = 6, 8, 400
	var inside [keys]atomic.Int32
	var wg sync.WaitGroup
	critical := func(k int) {
		if n := inside[k].Add(1); n != 1 {
			t.Errorf("key %d has %d holders", k, n)
		}
		runtime.Gosched()
		inside[k].Add(-1)
	}
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range rounds {
				k := rng.IntN(keys)
				switch rng.IntN(4) {
				case 0:
					m.Lock(k)
					critical(k)
					m.Unlock(k)
				case 1:
					if m.TryLock(k) {
						critical(k)
						m.Unlock(k)
					}
				case 2:
					ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(100))*time.Microsecond)
					if m.LockContext(ctx, k) == nil {
						critical(k)
						m.Unlock(k)
					}
					cancel()
				case 3:
					ctx, cancel := context.WithCancel(context.Background())
					if rng.IntN(4) == 0 {
						cancel()
					}
					_ = m.Do(ctx, k, func(context.Context) error { critical(k); return nil })
					cancel()
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, 0, m.Len())
}
