package ratelimit_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
)

// TestAllHoldsNoTokenWhileWaiting: an All waiter blocked on the slow
// limiter does not sit on the fast limiter's tokens, which stay free for
// others, and it passes as soon as the slow one allows.
func TestAllHoldsNoTokenWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fast := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1})
		slow := newBucket(t, ratelimit.BucketConfig{Rate: 0.25, Burst: 1})
		both := ratelimit.All(fast, slow)
		require.NoError(t, both.Wait(context.Background())) // takes both at 0s
		var wg sync.WaitGroup
		var passed time.Duration
		waitAt(t, &wg, both, 0, &passed) // slow is due at 4s
		for range 3 {
			time.Sleep(time.Second)
			require.True(t, fast.Allow(), "All held fast's token while waiting for slow")
		}
		wg.Wait()
		require.Equal(t, 4*time.Second, passed)
	})
}

// TestAllPerKeyAndGlobal combines a per-account limit with a global one: each
// account gets its own pace and together they never exceed the global rate.
func TestAllPerKeyAndGlobal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		accounts := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 1, Burst: 1})
		global := newBucket(t, ratelimit.BucketConfig{Rate: 3, Burst: 3})
		start := time.Now()
		var mu sync.Mutex
		var passes []time.Duration
		var wg sync.WaitGroup
		for _, acct := range []string{"a", "b", "c", "d", "e", "f"} {
			lim := ratelimit.All(accounts.For(acct), global)
			wg.Go(func() {
				for range 5 {
					require.NoError(t, lim.Wait(context.Background()))
					mu.Lock()
					passes = append(passes, time.Since(start))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(t, passes, 30)
		for _, p := range passes {
			n := 0
			for _, q := range passes {
				if q <= p {
					n++
				}
			}
			require.LessOrEqual(t, float64(n), 3+3*p.Seconds()+1e-6, "global rate exceeded at %v", p)
		}
		// 30 events at 3/s with a burst of 3 need (30-3)/3 = 9s. A token
		// given back after another caller reserved behind it is lost (see
		// All), which some interleavings of the six accounts hit; allow at
		// most three such losses.
		took := time.Since(start)
		require.GreaterOrEqual(t, took, 9*time.Second)
		require.LessOrEqual(t, took, 10*time.Second)
	})
}

// TestAllPause: a pause of any member holds the combination.
func TestAllPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		accounts := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 100, Burst: 1})
		global := newBucket(t, ratelimit.BucketConfig{Rate: 100, Burst: 1})
		lim := ratelimit.All(global, accounts.For("a"))
		accounts.PauseKey("a", time.Second)
		start := time.Now()
		require.NoError(t, lim.Wait(context.Background()))
		require.Equal(t, time.Second, time.Since(start))
		global.PauseFor(2 * time.Second)
		require.NoError(t, lim.Wait(context.Background()))
		require.Equal(t, 3*time.Second, time.Since(start))
	})
}

// TestAllCancel: an All waiter whose ctx ends gives every token back.
func TestAllCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1})
		b := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1})
		require.True(t, b.Allow())
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		require.Error(t, ratelimit.All(a, b).Wait(ctx))
		require.True(t, a.Allow(), "a's token was kept")

		ctx, cancel = context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { require.ErrorIs(t, ratelimit.All(b).Wait(ctx), context.Canceled) })
		time.Sleep(500 * time.Millisecond)
		cancel()
		wg.Wait()
		time.Sleep(500 * time.Millisecond)
		require.True(t, b.Allow(), "b's token was kept")
	})
}

type countingLimiter struct {
	n   int
	err error
}

func (c *countingLimiter) Wait(context.Context) error { c.n++; return c.err }

func TestAllOtherLimiters(t *testing.T) {
	plain := &countingLimiter{}
	b := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1})
	require.NoError(t, ratelimit.All(nil, plain, b).Wait(context.Background()))
	require.Equal(t, 1, plain.n)
	require.False(t, b.Allow())

	failing := &countingLimiter{err: errors.New("boom")}
	require.EqualError(t, ratelimit.All(b, failing).Wait(context.Background()), "boom")
	require.NoError(t, ratelimit.All().Wait(context.Background()))
}

// TestAllNotStarved: callers of All share a busy bucket with callers that
// wait on it directly, and still get their turn: waiting on the
// bottleneck's reservation keeps their place in its queue.
func TestAllNotStarved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		global := newBucket(t, ratelimit.BucketConfig{Rate: 10, Burst: 1})
		accounts := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 100, Burst: 1})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				for global.Wait(ctx) == nil {
				}
			})
		}
		both := ratelimit.All(accounts.For("a"), global)
		start := time.Now()
		for range 10 {
			require.NoError(t, both.Wait(ctx))
		}
		// Six callers share 10 events/s: ours gets one in six, so ten of
		// them take about six seconds.
		require.Less(t, time.Since(start), 7*time.Second)
		cancel()
		wg.Wait()
	})
}

// tickingClock is the real clock read one nanosecond later at every call, as
// a real clock never reads the same instant twice.
type tickingClock struct {
	clock.Clock
	n atomic.Int64
}

func (c *tickingClock) Now() time.Time { return c.Clock.Now().Add(time.Duration(c.n.Add(1))) }

// TestAllGivesBackDueTokens: a token that was due at once is given back when
// another limiter is the bottleneck, also on a clock that moves between the
// reservation and the give-back, so a failed All takes nothing.
func TestAllGivesBackDueTokens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		global := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1, Clock: &tickingClock{Clock: clock.New()}})
		perKey := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1})
		require.True(t, perKey.Allow()) // perKey's next token comes at 1s
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		require.ErrorIs(t, ratelimit.All(global, perKey).Wait(ctx), ratelimit.ErrWouldExceedDeadline)
		require.True(t, global.Allow(), "All kept global's token")
	})
}
