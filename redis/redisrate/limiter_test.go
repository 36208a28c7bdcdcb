package redisrate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisrate"
)

// newLimiter returns a Bucket of cfg on c; cfg.Name defaults to "api".
func newLimiter(t testing.TB, c redis.UniversalClient, cfg redisrate.BucketConfig) *redisrate.Bucket {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "api"
	}
	l, err := redisrate.NewBucket(t.Context(), c, cfg)
	require.NoError(t, err)
	return l
}

// tatKey and pauseKey are the names of a Bucket's keys.
func tatKey(p, name string) string   { return redisname.KeyPrefix(p, "rate", name) + "tat" }
func pauseKey(p, name string) string { return redisname.KeyPrefix(p, "rate", name) + "pause" }

// allowN calls Allow n times and returns how many were allowed.
func allowN(t testing.TB, l interface {
	Allow(context.Context) (bool, error)
}, n int) int {
	t.Helper()
	got := 0
	for range n {
		ok, err := l.Allow(context.Background())
		require.NoError(t, err)
		if ok {
			got++
		}
	}
	return got
}

// TestAllowBurstThenRefuse: a full bucket lets exactly Burst events
// through at once, then refuses; its state expires when it would be full
// again.
func TestAllowBurstThenRefuse(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := prefix(t, c)
	l := newLimiter(t, c, redisrate.BucketConfig{Rate: 0.1, Burst: 5, Prefix: p}) // a token per 10 s: none comes back during the test
	ctx := context.Background()
	for i := range 5 {
		ok, err := l.Allow(ctx)
		require.NoError(t, err)
		require.True(t, ok, "event %d of the burst", i+1)
	}
	require.Zero(t, allowN(t, l, 5), "allowed beyond the burst")
	ttl, err := c.PTTL(ctx, tatKey(p, "api")).Result()
	require.NoError(t, err)
	require.InDelta(t, 50*time.Second, ttl, float64(2*time.Second), "tat should expire when the bucket is full again: 5 tokens at 10 s each")
}

// TestRatePacesWaiters: Waits from several goroutines on two Bucket values
// pass no more than Burst + Rate·t events in a span t of the server's
// clock, and not far fewer.
func TestRatePacesWaiters(t *testing.T) {
	t.Parallel()
	c1, c2 := client(t), client(t)
	p := prefix(t, c1)
	const rate, burst, events = 50, 5, 45
	ls := []*redisrate.Bucket{
		newLimiter(t, c1, redisrate.BucketConfig{Rate: rate, Burst: burst, Prefix: p}),
		newLimiter(t, c2, redisrate.BucketConfig{Rate: rate, Burst: burst, Prefix: p}),
	}
	start := serverTime(t, c1)
	var left atomic.Int64
	left.Store(events)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := ls[g%2].Wait(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	took := serverTime(t, c1).Sub(start)
	least := time.Duration(events-burst) * time.Second / rate // 800 ms: the burst at once, then one per 20 ms
	require.GreaterOrEqual(t, took, least, "%d events in %v: faster than Burst + Rate·t", events, took)
	require.Less(t, took, least+2*time.Second, "%d events in %v: far slower than the rate", events, took)
}

// TestManyCallersAtOnce: calls of one Bucket value from more goroutines
// than fly alone share function calls (see flight.go) and still take
// exactly what the bucket has: Allow no more and no fewer than the burst,
// Wait at the rate.
func TestManyCallersAtOnce(t *testing.T) {
	t.Parallel()
	c := client(t)
	const goroutines = 16
	run := func(op func() error) {
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				if err := op(); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}

	l := newLimiter(t, c, redisrate.BucketConfig{Rate: 0.1, Burst: 50, Prefix: prefix(t, c)})
	var allowed atomic.Int64
	run(func() error {
		for range 8 {
			ok, err := l.Allow(context.Background())
			if err != nil {
				return err
			}
			if ok {
				allowed.Add(1)
			}
		}
		return nil
	})
	require.Equal(t, int64(50), allowed.Load(), "128 Allows at once of a burst of 50")

	const rate, burst, events = 100, 5, 80
	w := newLimiter(t, c, redisrate.BucketConfig{Rate: rate, Burst: burst, Prefix: prefix(t, c)})
	start := serverTime(t, c)
	run(func() error {
		for range events / goroutines {
			if err := w.Wait(context.Background()); err != nil {
				return err
			}
		}
		return nil
	})
	took := serverTime(t, c).Sub(start)
	least := time.Duration(events-burst) * time.Second / rate // 750 ms
	require.GreaterOrEqual(t, took, least, "%d events in %v: faster than Burst + Rate·t", events, took)
	require.Less(t, took, least+2*time.Second, "%d events in %v: far slower than the rate", events, took)
}

// TestSharedBudget: two Bucket values (two clients, as two processes)
// with one Name take from one bucket; another Name has its own.
func TestSharedBudget(t *testing.T) {
	t.Parallel()
	c1, c2 := client(t), client(t)
	p := prefix(t, c1)
	cfg := redisrate.BucketConfig{Rate: 0.1, Burst: 4, Prefix: p}
	a, b := newLimiter(t, c1, cfg), newLimiter(t, c2, cfg)
	require.Equal(t, 3, allowN(t, a, 3))
	require.Equal(t, 1, allowN(t, b, 3), "b should get what a left: one event")
	require.Zero(t, allowN(t, a, 1))

	cfg.Name = "other"
	require.Equal(t, 4, allowN(t, newLimiter(t, c2, cfg), 5), "another Name is another bucket")
}

// TestPauseShared: a pause set through one Bucket value holds another
// one's Allow and Wait; a shorter pause never shortens a longer one.
func TestPauseShared(t *testing.T) {
	t.Parallel()
	c1, c2 := client(t), client(t)
	p := prefix(t, c1)
	cfg := redisrate.BucketConfig{Rate: 100, Burst: 10, Prefix: p}
	a, b := newLimiter(t, c1, cfg), newLimiter(t, c2, cfg)
	ctx := context.Background()

	require.NoError(t, a.Pause(ctx, 10*time.Second))
	ok, err := b.Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok, "Allow during another instance's pause")
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	require.ErrorIs(t, b.Wait(short), ratelimit.ErrWouldExceedDeadline)

	b.PauseFor(time.Second) // shorter: must not shorten
	require.NoError(t, b.Err())
	ttl, err := c1.PTTL(ctx, pauseKey(p, "api")).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 9*time.Second, "a shorter pause shortened a longer one")

	b.PauseFor(20 * time.Second) // longer: extends
	ttl, err = c1.PTTL(ctx, pauseKey(p, "api")).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 19*time.Second, "a longer pause did not extend")
}

// TestPauseEndsAndEmpties: a Wait of another instance sleeps until the
// pause's end, not before; the pause empties the bucket.
func TestPauseEndsAndEmpties(t *testing.T) {
	t.Parallel()
	c1, c2 := client(t), client(t)
	p := prefix(t, c1)
	ctx := context.Background()

	fast := redisrate.BucketConfig{Rate: 1000, Burst: 10, Prefix: p, Name: "fast"}
	a, b := newLimiter(t, c1, fast), newLimiter(t, c2, fast)
	const pause = 300 * time.Millisecond
	start := time.Now()
	require.NoError(t, a.Pause(ctx, pause))
	require.NoError(t, b.Wait(ctx))
	require.GreaterOrEqual(t, time.Since(start), pause, "Wait returned during the pause")

	slow := redisrate.BucketConfig{Rate: 0.1, Burst: 10, Prefix: p, Name: "slow"}
	a, b = newLimiter(t, c1, slow), newLimiter(t, c2, slow)
	require.NoError(t, a.Pause(ctx, 50*time.Millisecond))
	eventually(t, "the pause to end", func() bool { return c1.Exists(ctx, pauseKey(p, "slow")).Val() == 0 })
	require.Zero(t, allowN(t, b, 1), "the pause should have emptied the bucket (one token per 10 s)")
}

// TestWaitDeadline: a Wait whose turn would come after ctx's deadline
// fails at once, having taken nothing.
func TestWaitDeadline(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := prefix(t, c)
	l := newLimiter(t, c, redisrate.BucketConfig{Rate: 2, Burst: 1, Prefix: p})
	ctx := context.Background()
	require.Equal(t, 1, allowN(t, l, 1))
	before := c.Get(ctx, tatKey(p, "api")).Val()

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond) // the next turn is 500 ms away
	defer cancel()
	start := time.Now()
	err := l.Wait(short)
	require.ErrorIs(t, err, ratelimit.ErrWouldExceedDeadline)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 300*time.Millisecond, "should fail at once, not at the deadline")
	require.Equal(t, before, c.Get(ctx, tatKey(p, "api")).Val(), "a refused Wait took a turn")

	long, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, l.Wait(long), "a turn within the deadline")
}

// TestWaitCancelGivesBack: a Wait whose ctx ends while it sleeps gives its
// turn back, unless another Wait took a turn after it.
func TestWaitCancelGivesBack(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := prefix(t, c)
	l := newLimiter(t, c, redisrate.BucketConfig{Rate: 0.1, Burst: 1, Prefix: p})
	ctx := context.Background()
	tat := func() string { return c.Get(ctx, tatKey(p, "api")).Val() }
	require.Equal(t, 1, allowN(t, l, 1))
	empty := tat()

	// wait starts a Wait and returns a cancel that ends it and returns its
	// error, once it has taken its turn.
	wait := func() func() error {
		before := tat()
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- l.Wait(ctx) }()
		eventually(t, "the Wait to take a turn", func() bool { return tat() != before })
		return func() error { cancel(); return <-done }
	}

	cancel1 := wait()
	require.ErrorIs(t, cancel1(), context.Canceled)
	require.Equal(t, empty, tat(), "the turn was not given back")

	cancel1 = wait()
	cancel2 := wait()
	second := tat()
	require.ErrorIs(t, cancel1(), context.Canceled)
	require.Equal(t, second, tat(), "a turn was given back with another taken after it")
	require.ErrorIs(t, cancel2(), context.Canceled)
	require.NotEqual(t, second, tat(), "the last turn was not given back")
}

// TestWaitCanceledFirst: a Wait on an ended ctx returns its error without
// taking anything.
func TestWaitCanceledFirst(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := prefix(t, c)
	l := newLimiter(t, c, redisrate.BucketConfig{Rate: 1, Prefix: p})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, l.Wait(ctx), context.Canceled)
	_, err := l.Allow(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, c.Exists(context.Background(), tatKey(p, "api")).Val())
}

// TestRedisUnreachable: once Redis is gone, Allow fails closed (or open
// with FailOpen), Wait returns the error either way, and every error
// names the package. A pause still holds this Bucket value.
func TestRedisUnreachable(t *testing.T) {
	t.Parallel()
	srv := redistest.StartServer(t)
	c := dial(t, &redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialerRetries: 1})
	ctx := context.Background()
	limiters := map[bool]*redisrate.Bucket{}
	for _, open := range []bool{false, true} {
		limiters[open] = newLimiter(t, c, redisrate.BucketConfig{Rate: 10, Name: "down", FailOpen: open})
	}
	k, err := redisrate.NewKeyed(t.Context(), c, redisrate.KeyedConfig{Rate: 10, Name: "down"})
	require.NoError(t, err)
	srv.Stop()

	for open, l := range limiters {
		ok, err := l.Allow(ctx)
		require.ErrorContains(t, err, `redisrate: Allow on "down": `)
		require.Equal(t, open, ok, "Allow with FailOpen=%v", open)
		require.ErrorContains(t, l.Wait(ctx), `redisrate: Wait on "down": `)

		l.PauseFor(time.Minute)
		require.ErrorContains(t, l.Err(), `redisrate: Pause on "down": `)
		ok, err = l.Allow(ctx)
		require.NoError(t, err)
		require.False(t, ok, "Allow during a pause set through this value")
		short, cancel := context.WithTimeout(ctx, time.Second)
		require.ErrorIs(t, l.Wait(short), ratelimit.ErrWouldExceedDeadline)
		cancel()
	}
	_, err = k.Allow(ctx, "acct")
	require.ErrorContains(t, err, `redisrate: Allow on "down", key "acct": `)
}

// TestFunctionsFlushed: a server that lost the function library (a
// restart without persistence, FUNCTION FLUSH) is given it again.
func TestFunctionsFlushed(t *testing.T) {
	t.Parallel()
	c := dial(t, &redis.Options{Addr: redistest.StartServer(t).Addr()})
	l := newLimiter(t, c, redisrate.BucketConfig{Rate: 0.1, Burst: 2})
	ctx := context.Background()
	require.Equal(t, 1, allowN(t, l, 1))
	require.NoError(t, c.FunctionFlush(ctx).Err())
	require.Equal(t, 1, allowN(t, l, 2))
	require.NoError(t, c.FunctionFlush(ctx).Err())
	require.NoError(t, l.Pause(ctx, time.Minute))
	require.Equal(t, int64(1), c.Exists(ctx, pauseKey("pacer", "api")).Val())
}

// TestConfigErrors: NewBucket and NewKeyed name the field that is wrong, before
// they look for the server.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	c := redistest.Unreachable(t)
	for _, tc := range []struct {
		cfg  redisrate.BucketConfig
		want string
	}{
		{redisrate.BucketConfig{Name: "a"}, "redisrate: BucketConfig.Rate must be in [1e-09, 1e+06], got 0"},
		{redisrate.BucketConfig{Rate: -1, Name: "a"}, "BucketConfig.Rate"},
		{redisrate.BucketConfig{Rate: 2e6, Name: "a"}, "BucketConfig.Rate"},
		{redisrate.BucketConfig{Rate: 1, Burst: -1, Name: "a"}, "redisrate: BucketConfig.Burst must be >= 0, got -1"},
		{redisrate.BucketConfig{Rate: 1e-9, Burst: 2, Name: "a"}, "redisrate: BucketConfig.Burst must be at most 1"},
		{redisrate.BucketConfig{Rate: 1}, "redisrate: BucketConfig.Name is required"},
		{redisrate.BucketConfig{Rate: 1, Name: "a{b"}, "redisrate: BucketConfig.Name \"a{b\" has a brace"},
		{redisrate.BucketConfig{Rate: 1, Name: "a", Prefix: "p}"}, "redisrate: BucketConfig.Prefix \"p}\" has a brace"},
	} {
		_, err := redisrate.NewBucket(t.Context(), c, tc.cfg)
		require.ErrorContains(t, err, tc.want, "%+v", tc.cfg)
		_, err = redisrate.NewKeyed(t.Context(), c, redisrate.KeyedConfig(tc.cfg))
		require.ErrorContains(t, err, "redisrate: KeyedConfig.")
	}
	_, err := redisrate.NewBucket(t.Context(), nil, redisrate.BucketConfig{Rate: 1, Name: "a"})
	require.ErrorContains(t, err, "redisrate: NewBucket needs a client")
	_, err = redisrate.NewBucket(t.Context(), client(t), redisrate.BucketConfig{Rate: 1, Name: "a"})
	require.NoError(t, err, "Burst and Prefix have defaults")
}

// TestNewUnreachable: NewBucket and NewKeyed of a wrong address fail at once,
// well before a ctx of a second ends (go-redis' default retries take
// about 1.7 s), with the address and what is missing.
func TestNewUnreachable(t *testing.T) {
	t.Parallel()
	c := redistest.Unreachable(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	want := "redisrate: " + c.Options().Addr + ": not reachable: dial tcp "
	_, err := redisrate.NewBucket(ctx, c, redisrate.BucketConfig{Rate: 1, Name: "a"})
	require.ErrorContains(t, err, want)
	_, err = redisrate.NewKeyed(ctx, c, redisrate.KeyedConfig{Rate: 1, Name: "a"})
	require.ErrorContains(t, err, want)
	require.NoError(t, ctx.Err(), "NewBucket waited for ctx's deadline")
}
