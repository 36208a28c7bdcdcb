package ratelimit_test

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
)

func newBucket(t *testing.T, cfg ratelimit.BucketConfig) *ratelimit.Bucket {
	t.Helper()
	b, err := ratelimit.NewBucket(cfg)
	require.NoError(t, err)
	return b
}

func TestBucketConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  ratelimit.BucketConfig
		want string
	}{
		{ratelimit.BucketConfig{}, "ratelimit: BucketConfig.Rate must be > 0, got 0"},
		{ratelimit.BucketConfig{Rate: 1, Burst: -1}, "BucketConfig.Burst"},
		{ratelimit.BucketConfig{Rate: 1, Adaptive: true, Decrease: 1}, "BucketConfig.Decrease"},
		{ratelimit.BucketConfig{Rate: 1, Adaptive: true, MinRate: 2}, "BucketConfig.MinRate"},
		{ratelimit.BucketConfig{Rate: 1, Adaptive: true, RecoverStep: -1}, "BucketConfig.RecoverStep"},
		{ratelimit.BucketConfig{Rate: 1, Adaptive: true, RecoverEvery: -1}, "BucketConfig.RecoverEvery"},
	} {
		_, err := ratelimit.NewBucket(tc.cfg)
		require.ErrorContains(t, err, tc.want)
	}
}

// TestBucketAllowSteps checks AllowN and PauseUntil at fixed instants.
func TestBucketAllowSteps(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	mock := clock.NewMock()
	mock.Set(t0)
	b := newBucket(t, ratelimit.BucketConfig{Rate: 10, Burst: 3, Clock: mock})
	type step struct {
		ms    int
		pause int // if > 0: PauseUntil(at(pause)) at ms instead of AllowN
		n     int
		ok    bool
	}
	for i, s := range []step{
		{ms: 0, n: 3, ok: true},
		{ms: 0, n: 1, ok: false},
		{ms: 100, n: 1, ok: true},
		{ms: 150, n: 1, ok: false},
		{ms: 400, n: 3, ok: true},
		{ms: 400, n: 4, ok: false}, // more than the burst
		{ms: 500, pause: 1000},     // empties the bucket until 1000
		{ms: 600, n: 1, ok: false},
		{ms: 700, pause: 800}, // an earlier end never shortens the pause
		{ms: 900, n: 1, ok: false},
		{ms: 999, n: 1, ok: false},
		{ms: 1000, n: 3, ok: true}, // refilled at the rate since 500, up to the burst
		{ms: 1000, n: 1, ok: false},
		{ms: 1100, n: 1, ok: true},
		{ms: 1150, pause: 1200},
		{ms: 1160, pause: 1400}, // a later end extends it
		{ms: 1300, n: 1, ok: false},
		{ms: 1400, n: 2, ok: true}, // 240ms of refill since the last pause began at 1160
		{ms: 1400, n: 1, ok: false},
	} {
		mock.Set(at(s.ms))
		if s.pause > 0 {
			b.PauseUntil(at(s.pause))
			continue
		}
		require.Equal(t, s.ok, b.AllowN(at(s.ms), s.n), "step %d at %dms", i, s.ms)
	}
	st := b.Stats()
	require.Equal(t, uint64(3), st.Pauses) // 500→1000, 1150→1200, 1160→1400; not 700→800
	require.Equal(t, at(1400), st.PausedUntil)
}

func TestBucketWaitPaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: 10, Burst: 2})
		start := time.Now()
		for range 12 {
			require.NoError(t, b.Wait(context.Background()))
		}
		// two from the burst, ten more at 100ms each
		require.Equal(t, time.Second, time.Since(start))
		st := b.Stats()
		require.Equal(t, uint64(10), st.Waits)
		require.Equal(t, time.Second, st.WaitTime)
	})
}

// waitAt starts a waiter on lim that arrives after a delay and records in
// passed how long after waitAt's call it got through.
func waitAt(t *testing.T, wg *sync.WaitGroup, lim ratelimit.Limiter, after time.Duration, passed *time.Duration) {
	start := time.Now()
	wg.Go(func() {
		time.Sleep(after)
		require.NoError(t, lim.Wait(context.Background()))
		*passed = time.Since(start)
	})
}

// TestBucketPauseHoldsSleepersAndNewcomers: a pause wakes a waiter that was
// already sleeping at the pause's end, not before and not at its old time,
// and holds newcomers too; the emptied bucket then refills at the rate.
func TestBucketPauseHoldsSleepersAndNewcomers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1})
		require.True(t, b.Allow())
		var wg sync.WaitGroup
		var sleeper, newcomer time.Duration
		waitAt(t, &wg, b, 0, &sleeper)                      // due at 1s
		time.Sleep(500 * time.Millisecond)                  // 0.5s
		b.PauseFor(3 * time.Second)                         // until 3.5s
		waitAt(t, &wg, b, 1500*time.Millisecond, &newcomer) // arrives at 2s
		synctest.Wait()
		time.Sleep(2900 * time.Millisecond) // 3.4s
		synctest.Wait()
		require.Zero(t, sleeper, "passed during the pause")
		require.Zero(t, newcomer, "passed during the pause")
		wg.Wait()
		// the first token after the pause is at 3.5s (refilled since 0.5s,
		// burst 1), the next one second later; either waiter may get it.
		require.ElementsMatch(t, []time.Duration{3500 * time.Millisecond, 4500 * time.Millisecond},
			[]time.Duration{sleeper, newcomer + 500*time.Millisecond})
	})
}

// TestBucketPauseExtends: a later pause wakes sleepers at its new end, an
// earlier one changes nothing.
func TestBucketPauseExtends(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: 1000, Burst: 1})
		b.PauseFor(5 * time.Second)
		var wg sync.WaitGroup
		var passed time.Duration
		waitAt(t, &wg, b, 0, &passed)
		time.Sleep(time.Second)
		b.PauseFor(time.Second) // ends at 2s: earlier, ignored
		time.Sleep(time.Second)
		b.PauseFor(6 * time.Second) // ends at 8s
		wg.Wait()
		require.Equal(t, 8*time.Second, passed)
		require.Equal(t, uint64(2), b.Stats().Pauses)
	})
}

// TestBucketCancelReturnsToken: a waiter whose ctx ends gets ctx.Err() and
// its token back, so the next caller does not pay for it.
func TestBucketCancelReturnsToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1})
		require.True(t, b.Allow())
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { require.ErrorIs(t, b.Wait(ctx), context.Canceled) })
		time.Sleep(500 * time.Millisecond)
		cancel()
		wg.Wait()
		time.Sleep(500 * time.Millisecond)
		require.True(t, b.Allow(), "the cancelled waiter's token was not given back")
		require.False(t, b.Allow())
	})
}

// TestBucketDeadlineFailsEarly: a wait that could not end before ctx's
// deadline fails at once and takes nothing.
func TestBucketDeadlineFailsEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1})
		require.True(t, b.Allow())
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		require.ErrorIs(t, b.Wait(ctx), ratelimit.ErrWouldExceedDeadline)
		require.Zero(t, time.Since(start))
		b.PauseFor(time.Hour)
		require.ErrorIs(t, b.Wait(ctx), ratelimit.ErrWouldExceedDeadline)
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1})
		require.True(t, b.Allow())
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		require.Error(t, b.Wait(ctx))
		time.Sleep(time.Second)
		require.True(t, b.Allow(), "the failed wait kept its token")
	})
}

func TestBucketErrors(t *testing.T) {
	b := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 2})
	require.ErrorContains(t, b.WaitN(context.Background(), 3), "exceeds the bucket's burst 2")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, b.Wait(ctx), context.Canceled)
	require.Equal(t, 2.0, b.TokensAt(time.Now()), "a cancelled ctx took a token")
}

// TestBucketAdaptive: a pause cuts the rate once per pause (an extension does
// not cut again), never below MinRate, and the rate climbs back by
// RecoverStep every RecoverEvery after the pause, up to Rate.
func TestBucketAdaptive(t *testing.T) {
	mock := clock.NewMock()
	b := newBucket(t, ratelimit.BucketConfig{
		Rate: 10, Burst: 1, Adaptive: true,
		Decrease: 0.5, MinRate: 2, RecoverStep: 1, RecoverEvery: 10 * time.Second,
		Clock: mock,
	})
	rate := func() float64 { return b.Stats().Rate }
	require.Equal(t, 10.0, rate())
	b.PauseFor(time.Second)
	require.Equal(t, 5.0, rate())
	mock.Add(500 * time.Millisecond)
	b.PauseFor(time.Second) // extends to 1.5s, no second cut
	require.Equal(t, 5.0, rate())
	mock.Add(10*time.Second + 999*time.Millisecond) // 11.499s: one step is due at 11.5s
	require.Equal(t, 5.0, rate())
	mock.Add(time.Millisecond)
	require.Equal(t, 6.0, rate())
	mock.Add(25 * time.Second) // two more steps
	require.Equal(t, 8.0, rate())
	b.PauseFor(time.Second)
	require.Equal(t, 4.0, rate())
	mock.Add(2 * time.Second)
	b.PauseFor(time.Second)
	require.Equal(t, 2.0, rate())
	mock.Add(2 * time.Second)
	b.PauseFor(time.Second)
	require.Equal(t, 2.0, rate(), "cut below MinRate")
	mock.Add(time.Hour)
	require.Equal(t, 10.0, rate(), "never above Rate")
}

// TestBucketAdaptivePaces: after a cut, waiters are paced at the cut rate.
func TestBucketAdaptivePaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: 10, Burst: 1, Adaptive: true, RecoverEvery: time.Hour})
		b.PauseFor(100 * time.Millisecond) // rate 5/s, one token at 0.2s
		start := time.Now()
		for range 5 {
			require.NoError(t, b.Wait(context.Background()))
		}
		require.Equal(t, time.Second, time.Since(start))
	})
}

// TestBucketHammer: many waiters and pauses at once. No event passes during
// a pause, and no more pass than the burst plus the rate allow.
func TestBucketHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, burst = 20, 4
		b := newBucket(t, ratelimit.BucketConfig{Rate: rate, Burst: burst})
		start := time.Now()
		var mu sync.Mutex
		var passes []time.Time
		var pauses [][2]time.Time
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Go(func() {
				for i := 0; ; i++ {
					if (w+i)%23 == 0 {
						mu.Lock()
						now := time.Now()
						b.PauseFor(time.Duration(w*37+i) * time.Millisecond % 700)
						pauses = append(pauses, [2]time.Time{now, b.Stats().PausedUntil})
						mu.Unlock()
					}
					if b.Wait(ctx) != nil {
						return
					}
					mu.Lock()
					passes = append(passes, time.Now())
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		require.LessOrEqual(t, float64(len(passes)), burst+rate*elapsed.Seconds()+1e-3) // 1e-3: nanosecond rounding
		require.Greater(t, len(passes), 50)
		for _, p := range passes {
			for _, pz := range pauses {
				require.False(t, p.After(pz[0]) && p.Before(pz[1]), "passed at %v during pause %v", p.Sub(start), pz)
			}
		}
	})
}

func TestBucketReadyAt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mock := clock.NewMock()
	mock.Set(t0)
	b := newBucket(t, ratelimit.BucketConfig{Rate: 4, Burst: 2, Clock: mock})
	ready := func(at time.Duration, n int) time.Duration {
		r, ok := b.ReadyAt(t0.Add(at), n)
		require.True(t, ok)
		return r.Sub(t0)
	}
	require.Equal(t, time.Duration(0), ready(0, 2))
	require.True(t, b.AllowN(t0, 2))
	require.Equal(t, 250*time.Millisecond, ready(0, 1))
	require.Equal(t, 500*time.Millisecond, ready(0, 2))
	require.Equal(t, 500*time.Millisecond, ready(100*time.Millisecond, 2))
	require.Equal(t, 600*time.Millisecond, ready(600*time.Millisecond, 2))
	_, ok := b.ReadyAt(t0, 3)
	require.False(t, ok)
	b.PauseUntil(t0.Add(time.Second)) // empties the bucket at t0
	require.Equal(t, time.Second, ready(0, 2))
	require.Equal(t, time.Second, ready(0, 1))
	require.Equal(t, 2*time.Second, ready(2*time.Second, 1))
	require.Equal(t, 0.0, b.TokensAt(t0.Add(999*time.Millisecond)))
	require.Equal(t, 2.0, b.TokensAt(t0.Add(time.Second)))
}

func TestBucketInfiniteRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: math.Inf(1), Burst: 1})
		for range 100 {
			require.True(t, b.Allow())
		}
		require.NoError(t, b.WaitN(context.Background(), 5))
		at, ok := b.ReadyAt(time.Now(), 5)
		require.True(t, ok)
		require.Equal(t, time.Now(), at)
		b.PauseFor(time.Second)
		require.False(t, b.Allow())
		start := time.Now()
		require.NoError(t, b.Wait(context.Background()))
		require.Equal(t, time.Second, time.Since(start))
	})
}

// TestBucketMockClock: a Bucket sleeps on the injected clock's timers.
func TestBucketMockClock(t *testing.T) {
	mock := clock.NewMock()
	b := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1, Clock: mock})
	require.True(t, b.Allow())
	b.PauseFor(5 * time.Second)
	start := mock.Now()
	done := make(chan time.Time)
	go func() {
		require.NoError(t, b.Wait(context.Background()))
		done <- mock.Now()
	}()
	for {
		select {
		case at := <-done:
			// at is read after the wake-up, so it may be a few steps late.
			require.GreaterOrEqual(t, at.Sub(start), 5*time.Second)
			return
		default:
			mock.Add(100 * time.Millisecond)
		}
	}
}

// TestBucketModel drives AllowN and PauseUntil with random operations and
// compares every answer with a reference model: a float token bucket that
// a pause empties and holds until its end.
func TestBucketModel(t *testing.T) {
	for seed := range uint64(20) {
		synctest.Test(t, func(t *testing.T) { bucketModelRun(t, seed) })
	}
}

func bucketModelRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 11))
	r := float64(1 + rng.IntN(50))
	burst := 1 + rng.IntN(5)
	b := newBucket(t, ratelimit.BucketConfig{Rate: r, Burst: burst})
	tokens, last, pauseEnd := float64(burst), time.Now(), time.Time{}
	interval := time.Duration(float64(time.Second) / r)
	for step := range 2000 {
		time.Sleep(time.Duration(rng.IntN(int(2 * interval))))
		now := time.Now()
		tokens = min(float64(burst), tokens+now.Sub(last).Seconds()*r)
		last = now
		if rng.IntN(20) == 0 {
			end := now.Add(time.Duration(rng.IntN(int(5 * interval))))
			b.PauseUntil(end)
			if end.After(now) && end.After(pauseEnd) {
				pauseEnd, tokens = end, 0
			}
			continue
		}
		n := 1 + rng.IntN(burst+1)
		got := b.AllowN(now, n)
		if math.Abs(tokens-float64(n)) < 1e-6 && !now.Before(pauseEnd) {
			// too close to call in floating point: follow the bucket
			if got {
				tokens -= float64(n)
			}
			continue
		}
		want := !now.Before(pauseEnd) && tokens >= float64(n)
		require.Equal(t, want, got, "seed %d step %d n %d tokens %v", seed, step, n, tokens)
		if want {
			tokens -= float64(n)
		}
	}
}

// TestBucketHugePause: a pause beyond the year 2262 saturates instead of
// wrapping around into the past.
func TestBucketHugePause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1, Adaptive: true})
		b.PauseFor(math.MaxInt64)
		require.False(t, b.Allow())
		b.PauseUntil(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
		require.False(t, b.Allow())
		time.Sleep(100 * 365 * 24 * time.Hour)
		require.False(t, b.Allow())
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		require.ErrorIs(t, b.Wait(ctx), ratelimit.ErrWouldExceedDeadline)
		require.Equal(t, 0.5, b.Stats().Rate, "one cut, no recovery during the pause")
	})
}

// TestBucketAdaptiveCutsRecoveredRate: a pause cuts the rate the bucket has
// recovered to, even when no call applied the recovery steps since the last
// pause.
func TestBucketAdaptiveCutsRecoveredRate(t *testing.T) {
	mock := clock.NewMock()
	b := newBucket(t, ratelimit.BucketConfig{
		Rate: 10, Burst: 1, Adaptive: true,
		Decrease: 0.5, MinRate: 1, RecoverStep: 1, RecoverEvery: 10 * time.Second,
		Clock: mock,
	})
	b.PauseFor(time.Second) // 10 -> 5
	mock.Add(time.Hour)     // fully recovered, but nobody asked
	b.PauseFor(time.Second) // 10 -> 5, not 5 -> 2.5
	require.Equal(t, 5.0, b.Stats().Rate)
}

// TestBucketBurstErrorDuringPause: WaitN with n above the burst fails at
// once during a pause too, instead of sleeping through the pause first.
func TestBucketBurstErrorDuringPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 2})
		b.PauseFor(time.Hour)
		start := time.Now()
		require.ErrorContains(t, b.WaitN(context.Background(), 3), "exceeds the bucket's burst 2")
		require.Zero(t, time.Since(start))
		require.Zero(t, b.Stats().Waits)
	})
}
