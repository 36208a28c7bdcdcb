package pgrate_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgrate"
	"github.com/pacerkit/pacer/ratelimit"
)

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

// serverTime reads the server's clock.
func serverTime(t testing.TB, pool *pgxpool.Pool) time.Time {
	t.Helper()
	var now time.Time
	require.NoError(t, pool.QueryRow(context.Background(), "SELECT clock_timestamp()").Scan(&now))
	return now
}

// bucketRow reads the tat and pause of the Bucket named name in schema.
func bucketRow(t testing.TB, pool *pgxpool.Pool, schema, name string) (tat, pausedUntil time.Time) {
	t.Helper()
	require.NoError(t, pool.QueryRow(context.Background(),
		"SELECT tat, paused_until FROM "+pgx.Identifier{schema, "rate_buckets"}.Sanitize()+" WHERE name = $1 AND NOT keyed",
		[]byte(name)).Scan(&tat, &pausedUntil))
	return tat, pausedUntil
}

// TestAllowBurstThenRefuse: a full bucket lets exactly Burst events
// through at once, then refuses.
func TestAllowBurstThenRefuse(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	l := newBucket(t, pool, pgrate.BucketConfig{Rate: 0.1, Burst: 5, Name: "api", Schema: freshSchema(t, pool)}) // a token per 10 s
	require.Equal(t, 5, allowN(t, l, 5))
	require.Zero(t, allowN(t, l, 5), "allowed beyond the burst")
}

// TestSharedBudget: two Bucket values on two pools (as two processes)
// with one Name take from one bucket; another Name has its own.
func TestSharedBudget(t *testing.T) {
	t.Parallel()
	p1, p2 := connect(t), connect(t)
	cfg := pgrate.BucketConfig{Rate: 0.1, Burst: 4, Name: "api", Schema: freshSchema(t, p1)}
	a, b := newBucket(t, p1, cfg), newBucket(t, p2, cfg)
	require.Equal(t, 3, allowN(t, a, 3))
	require.Equal(t, 1, allowN(t, b, 3), "b should get what a left: one event")
	require.Zero(t, allowN(t, a, 1))

	cfg.Name = "other"
	require.Equal(t, 4, allowN(t, newBucket(t, p2, cfg), 5), "another Name is another bucket")
}

// TestRatePacesWaiters: Waits from several goroutines on two Bucket values
// on two pools pass no more than Burst + Rate·t events in a span t of the
// server's clock, and not far fewer.
func TestRatePacesWaiters(t *testing.T) {
	t.Parallel()
	p1, p2 := connect(t), connect(t)
	const rate, burst, events = 50, 5, 45
	cfg := pgrate.BucketConfig{Rate: rate, Burst: burst, Name: "api", Schema: freshSchema(t, p1)}
	ls := []*pgrate.Bucket{newBucket(t, p1, cfg), newBucket(t, p2, cfg)}
	start := serverTime(t, p1)
	var wg sync.WaitGroup
	for i := range events {
		wg.Go(func() { require.NoError(t, ls[i%2].Wait(context.Background())) })
	}
	wg.Wait()
	took := serverTime(t, p1).Sub(start)
	least := time.Duration(events-burst) * time.Second / rate // 800 ms
	require.GreaterOrEqual(t, took, least, "%d events in %v: faster than Burst + Rate·t", events, took)
	require.Less(t, took, least+2*time.Second, "%d events in %v: far slower than the rate", events, took)
}

// TestPauseShared: a pause set through one Bucket value holds another
// one's, on another pool, Allow and Wait; a shorter pause never shortens
// a longer one, and a longer one extends it.
func TestPauseShared(t *testing.T) {
	t.Parallel()
	p1, p2 := connect(t), connect(t)
	schema := freshSchema(t, p1)
	cfg := pgrate.BucketConfig{Rate: 100, Burst: 10, Name: "api", Schema: schema}
	a, b := newBucket(t, p1, cfg), newBucket(t, p2, cfg)
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
	_, until := bucketRow(t, p1, schema, "api")
	require.Greater(t, until.Sub(serverTime(t, p1)), 9*time.Second, "a shorter pause shortened a longer one")

	b.PauseFor(20 * time.Second) // longer: extends
	_, until = bucketRow(t, p1, schema, "api")
	require.Greater(t, until.Sub(serverTime(t, p1)), 19*time.Second, "a longer pause did not extend")
}

// TestPauseEndsAndEmpties: a Wait of another instance sleeps until the
// pause's end, not before; the pause empties the bucket.
func TestPauseEndsAndEmpties(t *testing.T) {
	t.Parallel()
	p1, p2 := connect(t), connect(t)
	schema := freshSchema(t, p1)
	ctx := context.Background()

	fast := pgrate.BucketConfig{Rate: 1000, Burst: 10, Name: "fast", Schema: schema}
	a, b := newBucket(t, p1, fast), newBucket(t, p2, fast)
	const pause = 300 * time.Millisecond
	start := time.Now()
	require.NoError(t, a.Pause(ctx, pause))
	require.NoError(t, b.Wait(ctx))
	require.GreaterOrEqual(t, time.Since(start), pause, "Wait returned during the pause")

	slow := pgrate.BucketConfig{Rate: 0.1, Burst: 10, Name: "slow", Schema: schema}
	a, b = newBucket(t, p1, slow), newBucket(t, p2, slow)
	require.NoError(t, a.Pause(ctx, 50*time.Millisecond))
	_, until := bucketRow(t, p1, schema, "slow")
	time.Sleep(until.Sub(serverTime(t, p1))) // the server's clock: no fake one to move
	require.Zero(t, allowN(t, b, 1), "the pause should have emptied the bucket (one token per 10 s)")
}

// TestWaitDeadline: a Wait whose turn would come after ctx's deadline
// fails at once, having taken nothing.
func TestWaitDeadline(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	schema := freshSchema(t, pool)
	l := newBucket(t, pool, pgrate.BucketConfig{Rate: 2, Burst: 1, Name: "api", Schema: schema})
	ctx := context.Background()
	require.Equal(t, 1, allowN(t, l, 1))
	before, _ := bucketRow(t, pool, schema, "api")

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond) // the next turn is 500 ms away
	defer cancel()
	start := time.Now()
	err := l.Wait(short)
	require.ErrorIs(t, err, ratelimit.ErrWouldExceedDeadline)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Less(t, time.Since(start), 300*time.Millisecond, "should fail at once, not at the deadline")
	after, _ := bucketRow(t, pool, schema, "api")
	require.Equal(t, before, after, "a refused Wait took a turn")

	long, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	require.NoError(t, l.Wait(long), "a turn within the deadline")
}

// TestWaitCancelGivesBack: a Wait whose ctx ends while it sleeps gives its
// turn back, unless another Wait took a turn after it.
func TestWaitCancelGivesBack(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	schema := freshSchema(t, pool)
	l := newBucket(t, pool, pgrate.BucketConfig{Rate: 0.1, Burst: 1, Name: "api", Schema: schema})
	ctx := context.Background()
	tat := func() time.Time { v, _ := bucketRow(t, pool, schema, "api"); return v }
	require.Equal(t, 1, allowN(t, l, 1))
	empty := tat()

	waitCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- l.Wait(waitCtx) }()
	require.Eventually(t, func() bool { return tat().After(empty) }, 5*time.Second, 5*time.Millisecond, "the Wait took no turn")
	stop()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Equal(t, empty, tat(), "the turn was not given back")

	// Two turns taken; the first one cancelled is not given back, as the
	// second came after it.
	first, stopFirst := context.WithCancel(ctx)
	go func() { done <- l.Wait(first) }()
	require.Eventually(t, func() bool { return tat().After(empty) }, 5*time.Second, 5*time.Millisecond)
	one := tat()
	second := make(chan error, 1)
	// A deadline made here, well short of the turn and long enough for a
	// slow round trip, so the Wait sees it ahead of it rather than past.
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	go func() { second <- l.Wait(short) }()
	require.ErrorIs(t, <-second, ratelimit.ErrWouldExceedDeadline, "the second turn is 20 s away")
	secondCtx, stopSecond := context.WithCancel(ctx)
	go func() { second <- l.Wait(secondCtx) }()
	require.Eventually(t, func() bool { return tat().After(one) }, 5*time.Second, 5*time.Millisecond)
	two := tat()
	stopFirst()
	require.ErrorIs(t, <-done, context.Canceled)
	require.Equal(t, two, tat(), "a turn given back while a later one was taken")
	stopSecond()
	require.ErrorIs(t, <-second, context.Canceled)
	require.Equal(t, one, tat(), "the last turn was not given back")
}
