package redismutex_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/pacerkit/pacer/redis/redismutex"
)

// TestExclusive runs 32 goroutines over 4 Lockers, each on a client of its
// own as separate processes would be, that take one key's lock in turn
// and increment a counter inside: no two are ever inside at once, no
// increment is lost, and the fences grow in the order the holders came
// in.
func TestExclusive(t *testing.T) {
	t.Parallel()
	const (
		lockers    = 4
		goroutines = 8 // per Locker
		rounds     = 15
	)
	cfg := config(t, time.Second)
	var (
		inside  atomic.Int32
		counter int // guarded by the lock alone
		last    uint64
		wg      sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for range lockers {
		m := newLocker(t, cfg)
		for range goroutines {
			wg.Go(func() {
				for range rounds {
					l, err := m.LockContext(ctx, "k")
					if err != nil {
						t.Error(err)
						return
					}
					if n := inside.Add(1); n != 1 {
						t.Errorf("%d holders inside at once", n)
					}
					if l.Fence() <= last {
						t.Errorf("fence %d after %d", l.Fence(), last)
					}
					last = l.Fence()
					c := counter
					time.Sleep(100 * time.Microsecond) // widens the window a second holder would hit
					counter = c + 1
					inside.Add(-1)
					if err := l.Unlock(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	require.Equal(t, lockers*goroutines*rounds, counter, "no increment lost")
	require.Equal(t, uint64(lockers*goroutines*rounds), last, "one fence per acquisition")
}

// TestExclusiveTryLock has holders spin on TryLock instead, so that their
// attempts race in Redis itself.
func TestExclusiveTryLock(t *testing.T) {
	t.Parallel()
	cfg := config(t, time.Second)
	var inside atomic.Int32
	var taken atomic.Int64
	var wg sync.WaitGroup
	ctx := context.Background()
	deadline := time.Now().Add(time.Second)
	for range 4 {
		m := newLocker(t, cfg)
		for range 4 {
			wg.Go(func() {
				for time.Now().Before(deadline) {
					l, err := m.TryLock(ctx, "k")
					if errors.Is(err, redismutex.ErrLocked) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					if n := inside.Add(1); n != 1 {
						t.Errorf("%d holders inside at once", n)
					}
					taken.Add(1)
					time.Sleep(100 * time.Microsecond)
					inside.Add(-1)
					if err := l.Unlock(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	require.Positive(t, taken.Load())
	t.Logf("%d acquisitions", taken.Load())
}

func TestFenceGrows(t *testing.T) {
	t.Parallel()
	cfg := config(t, time.Second)
	a, b := newLocker(t, cfg), newLocker(t, cfg)
	c := client(t)
	ctx := context.Background()
	var fences []uint64
	for i := range 6 {
		m := []*redismutex.Locker{a, b}[i%2]
		l, err := m.TryLock(ctx, "k")
		require.NoError(t, err)
		fences = append(fences, l.Fence())
		if i == 3 {
			// A lock that lapses, rather than being unlocked, does not
			// reset the fence either.
			require.NoError(t, c.Del(ctx, lockKey(cfg, "k")).Err())
			continue
		}
		require.NoError(t, l.Unlock(ctx))
	}
	require.Equal(t, []uint64{1, 2, 3, 4, 5, 6}, fences)

	l, err := a.TryLock(ctx, "other")
	require.NoError(t, err)
	require.Equal(t, uint64(7), l.Fence(), "the keys of a Name share one counter")
	require.NoError(t, l.Unlock(ctx))

	other := cfg
	other.Name += "-other"
	l, err = newLocker(t, other).TryLock(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, uint64(1), l.Fence(), "each Name has fences of its own")
	require.NoError(t, l.Unlock(ctx))
}

// Locking many keys leaves one key behind in Redis, the fence counter,
// whatever the number of keys ever locked.
func TestLocksLeaveOneKey(t *testing.T) {
	t.Parallel()
	cfg := config(t, time.Second)
	m := newLocker(t, cfg)
	ctx := context.Background()
	for i := range 100 {
		l, err := m.TryLock(ctx, fmt.Sprint("key-", i))
		require.NoError(t, err)
		require.NoError(t, l.Unlock(ctx))
	}
	keys, err := client(t).Keys(ctx, "{"+cfg.Prefix+":lock:"+cfg.Name+"}:*").Result()
	require.NoError(t, err)
	require.Len(t, keys, 1, "%v", keys)
}

func TestTryLock(t *testing.T) {
	t.Parallel()
	cfg := config(t, 10*time.Second)
	a, b := newLocker(t, cfg), newLocker(t, cfg)
	ctx := context.Background()

	l, err := a.TryLock(ctx, "k")
	require.NoError(t, err)
	for _, m := range []*redismutex.Locker{a, b} {
		_, err = m.TryLock(ctx, "k")
		require.ErrorIs(t, err, redismutex.ErrLocked, "held, by this Locker or another: not reentrant")
	}
	other, err := b.TryLock(ctx, "k2")
	require.NoError(t, err, "keys are independent")
	require.NoError(t, other.Unlock(ctx))

	require.NoError(t, l.Unlock(ctx))
	require.ErrorIs(t, l.Unlock(ctx), redismutex.ErrLockLost, "a second Unlock")
	l, err = b.TryLock(ctx, "k")
	require.NoError(t, err, "free once unlocked")
	require.NoError(t, l.Unlock(ctx))

	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = a.TryLock(done, "k")
	require.ErrorIs(t, err, context.Canceled)

	cfg.Name = "u"
	l, err = newLocker(t, cfg).TryLock(ctx, "k")
	require.NoError(t, err, "Names are independent")
	require.NoError(t, l.Unlock(ctx))
}

// A Lock's Context ends with Unlock, with cause context.Canceled, and
// carries the fence.
func TestLockContext(t *testing.T) {
	t.Parallel()
	m := newLocker(t, config(t, 10*time.Second))
	ctx := context.Background()
	l, err := m.TryLock(ctx, "k")
	require.NoError(t, err)
	held := l.Context()
	require.NoError(t, held.Err())
	f, ok := redismutex.FenceFrom(held)
	require.True(t, ok)
	require.Equal(t, l.Fence(), f)
	require.NoError(t, l.Unlock(ctx))
	require.ErrorIs(t, held.Err(), context.Canceled)
	require.ErrorIs(t, context.Cause(held), context.Canceled)

	_, ok = redismutex.FenceFrom(ctx)
	require.False(t, ok)
}

// A waiter is woken by the release of the lock, not by the lapse of its
// TTL.
func TestLockContextWokenByUnlock(t *testing.T) {
	t.Parallel()
	const ttl = 20 * time.Second
	cfg := config(t, ttl)
	a, b := newLocker(t, cfg), newLocker(t, cfg)
	ctx := context.Background()
	held, err := a.TryLock(ctx, "k")
	require.NoError(t, err)

	got := lockLater(t, b, ctx, "k")
	waitMarked(t, cfg, "k")
	select {
	case <-got:
		t.Fatal("acquired a held lock")
	case <-time.After(50 * time.Millisecond):
	}
	unlocked := time.Now()
	require.NoError(t, held.Unlock(ctx))
	var l *redismutex.Lock
	select {
	case l = <-got:
	case <-time.After(ttl / 4):
		t.Fatal("the waiter was not woken by Unlock")
	}
	took := time.Since(unlocked)
	require.NotNil(t, l)
	require.Less(t, took, 2*time.Second, "woken by the release, not the TTL")
	require.Equal(t, held.Fence()+1, l.Fence())
	require.NoError(t, l.Unlock(ctx))
	t.Logf("acquired %v after Unlock", took)
}

// lockLater runs m.LockContext(ctx, key) on a goroutine of its own and
// returns a channel that gets its Lock (nil, with the test failed, if it
// returned an error).
func lockLater(t *testing.T, m *redismutex.Locker, ctx context.Context, key string) <-chan *redismutex.Lock {
	got := make(chan *redismutex.Lock, 1)
	go func() {
		l, err := m.LockContext(ctx, key)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	return got
}

// waitMarked waits until a LockContext has marked the lock of key as
// waited for: a waiter asked Redis and now sleeps.
func waitMarked(t *testing.T, cfg redismutex.Config, key string) {
	t.Helper()
	c := client(t)
	require.Eventually(t, func() bool {
		v, err := c.Get(context.Background(), lockKey(cfg, key)).Result()
		return err == nil && v[len(v)-1] == '*'
	}, 5*time.Second, time.Millisecond, "a waiter marks the lock")
}

func TestLockContextCancelled(t *testing.T) {
	t.Parallel()
	cfg := config(t, 20*time.Second)
	a, b := newLocker(t, cfg), newLocker(t, cfg)
	ctx := context.Background()
	held, err := a.TryLock(ctx, "k")
	require.NoError(t, err)

	// Two waiters of one Locker: the first gives up, the second is woken
	// in its place and gets the lock when it is released.
	wctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		_, err := b.LockContext(wctx, "k")
		gaveUp <- err
	}()
	waitMarked(t, cfg, "k")
	got := lockLater(t, b, ctx, "k")
	cancel()
	select {
	case err := <-gaveUp:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("LockContext did not return when its ctx ended")
	}
	time.Sleep(20 * time.Millisecond) // the second asks Redis and sleeps
	require.NoError(t, held.Unlock(ctx))
	select {
	case l := <-got:
		require.NoError(t, l.Unlock(ctx))
	case <-time.After(5 * time.Second):
		t.Fatal("the next waiter did not get the lock")
	}

	dctx, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	held, err = a.TryLock(ctx, "k")
	require.NoError(t, err)
	_, err = b.LockContext(dctx, "k")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, held.Unlock(ctx))
}

// The waiters of one Locker for one key queue: only the first asks Redis,
// so a release costs the Locker about two scripts (the first waiter's
// acquisition, and the next one's try), not one per waiter.
func TestLockContextNoStampede(t *testing.T) {
	t.Parallel()
	const waiters = 10
	cfg := config(t, 20*time.Second)
	a := newLocker(t, cfg)
	c := client(t)
	var scripts atomic.Int64
	c.AddHook(countScripts{&scripts})
	b := newLockerOn(t, c, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	held, err := a.TryLock(ctx, "k")
	require.NoError(t, err)

	var inside atomic.Int32
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			l, err := b.LockContext(ctx, "k")
			if err != nil {
				t.Error(err)
				return
			}
			if inside.Add(1) != 1 {
				t.Error("two holders at once")
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			if err := l.Unlock(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	waitMarked(t, cfg, "k")
	time.Sleep(50 * time.Millisecond)
	require.LessOrEqual(t, scripts.Load(), int64(3), "only the first waiter asks Redis while the lock is held")
	require.NoError(t, held.Unlock(ctx))
	wg.Wait()
	// Per waiter: its acquisition, the try of the one after it, and its
	// release; plus a few tries woken by the subscription.
	n := scripts.Load()
	require.LessOrEqual(t, n, int64(4*waiters), "scripts run by the waiting Locker")
	t.Logf("%d waiters: %d scripts", waiters, n)
}

// countScripts counts the functions a client calls.
type countScripts struct{ n *atomic.Int64 }

func (countScripts) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countScripts) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "fcall" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (countScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A lock renewed by its holder outlives its TTL many times over.
func TestRenewalKeepsLock(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	cfg := config(t, ttl)
	a, b := newLocker(t, cfg), newLocker(t, cfg)
	c := client(t)
	ctx := context.Background()
	l, err := a.TryLock(ctx, "k")
	require.NoError(t, err)
	least := ttl
	until := time.Now().Add(5 * ttl)
	for time.Now().Before(until) {
		_, err := b.TryLock(ctx, "k")
		require.ErrorIs(t, err, redismutex.ErrLocked)
		left, err := c.PTTL(ctx, lockKey(cfg, "k")).Result()
		require.NoError(t, err)
		require.Positive(t, left)
		least = min(least, left)
		require.NoError(t, l.Context().Err())
		time.Sleep(ttl / 10)
	}
	require.NoError(t, l.Unlock(ctx))
	t.Logf("held for %v with a TTL of %v; at least %v left at any time", 5*ttl, ttl, least)
}

// A lock deleted behind its holder's back is lost at the next renewal.
func TestLockLostWhenDeleted(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	cfg := config(t, ttl)
	m := newLocker(t, cfg)
	c := client(t)
	ctx := context.Background()
	l, err := m.TryLock(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, c.Del(ctx, lockKey(cfg, "k")).Err())
	deleted := time.Now()
	select {
	case <-l.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the holder did not notice")
	}
	require.Less(t, time.Since(deleted), 2*ttl, "noticed at the next renewal")
	require.ErrorIs(t, context.Cause(l.Context()), redismutex.ErrLockLost)
	require.ErrorIs(t, l.Unlock(ctx), redismutex.ErrLockLost)

	// Taken by another meanwhile: the holder's renewal fails too, and
	// its Unlock does not release the other's lock.
	l, err = m.TryLock(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, c.Set(ctx, lockKey(cfg, "k"), "someone else", 0).Err())
	select {
	case <-l.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the holder did not notice")
	}
	require.ErrorIs(t, l.Unlock(ctx), redismutex.ErrLockLost)
	v, err := c.Get(ctx, lockKey(cfg, "k")).Result()
	require.NoError(t, err)
	require.Equal(t, "someone else", v)
}

// TestCloseEndsWaiters closes a Locker with a held lock and waiters: the
// waiters return ErrClosed, the lock's Context ends with cause ErrClosed,
// later calls return ErrClosed, and no goroutine is left.
func TestClose(t *testing.T) {
	cfg := config(t, 20*time.Second)
	a := newLocker(t, cfg)
	c := client(t)
	ctx := context.Background()
	held, err := a.TryLock(ctx, "k")
	require.NoError(t, err)
	others := goleak.IgnoreCurrent()

	b := newLockerOn(t, c, cfg)
	mine, err := b.TryLock(ctx, "mine")
	require.NoError(t, err)
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := b.LockContext(ctx, "k")
			errs <- err
		}()
	}
	waitMarked(t, cfg, "k")
	require.NoError(t, b.Close())
	for range 3 {
		select {
		case err := <-errs:
			require.ErrorIs(t, err, redismutex.ErrClosed)
		case <-time.After(5 * time.Second):
			t.Fatal("a waiter did not return at Close")
		}
	}
	require.ErrorIs(t, context.Cause(mine.Context()), redismutex.ErrClosed)
	_, err = b.TryLock(ctx, "x")
	require.ErrorIs(t, err, redismutex.ErrClosed)
	_, err = b.LockContext(ctx, "x")
	require.ErrorIs(t, err, redismutex.ErrClosed)
	require.ErrorIs(t, b.Do(ctx, "x", func(context.Context) error { return nil }), redismutex.ErrClosed)
	require.NoError(t, mine.Unlock(ctx), "Unlock still releases the lock")
	require.NoError(t, b.Close())
	goleak.VerifyNone(t, others) // Close left no goroutine
	require.NoError(t, held.Unlock(ctx))
}

func ExampleLocker_Do() {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer c.Close()
	m, err := redismutex.New(context.Background(), c, redismutex.Config{Name: "accounts"})
	if err != nil {
		panic(err)
	}
	defer m.Close()
	err = m.Do(context.Background(), "account-42", func(ctx context.Context) error {
		fence, _ := redismutex.FenceFrom(ctx)
		// Write with the fence, so that the store refuses the writes of
		// a holder that lost the lock: UPDATE ... WHERE fence < $fence.
		fmt.Println("holding the lock, fence", fence > 0)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
}
