package pgrate_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgrate"
	"github.com/pacerkit/pacer/ratelimit"
)

// gcra is GCRA as the package doc states it, in time.Time, the model that
// the tests feed with the server's clock from the statements' replies.
type gcra struct {
	interval, span time.Duration
	tat, pause     time.Time // zero: full, not paused
}

func latest(ts ...time.Time) time.Time {
	l := ts[0]
	for _, t := range ts[1:] {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// at is when an event asked at now conforms.
func (g *gcra) at(now time.Time) time.Time {
	return latest(now, g.pause, g.tat.Add(g.interval-g.span))
}

// take takes the event that conforms at at.
func (g *gcra) take(at time.Time) { g.tat = latest(g.tat, at).Add(g.interval) }

// pauseUntil pauses until until, set at now, if that extends the pause.
func (g *gcra) pauseUntil(now, until time.Time) {
	if until.After(g.pause) {
		g.pause = until
		g.tat = latest(g.tat, now.Add(g.span))
	}
}

// TestAllowMatchesModels: a sequence of Allows, with a pause now and then,
// gets from the server the decisions of GCRA and of ratelimit's
// in-process Bucket, both fed with the server's clock that each reply
// carries. A refused Allow carries no clock: the models must refuse too
// at the clock of the reply before it, which came earlier.
func TestAllowMatchesModels(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	ctx := context.Background()
	l := newBucket(t, pool, pgrate.BucketConfig{Rate: 2000, Burst: 3, Name: "model", Schema: freshSchema(t, pool)})
	g := &gcra{interval: pgrate.Interval(l), span: pgrate.Span(l)}
	require.Equal(t, 500*time.Microsecond, g.interval)
	mock := clock.NewMock()
	model, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 2000, Burst: 3, Clock: mock})
	require.NoError(t, err)

	r := rand.New(rand.NewPCG(1, 2))
	var last time.Time // the clock of the last reply
	allowed, refused, paused := 0, 0, 0
	for i := range 600 {
		if i%150 == 75 {
			now, until, err := pgrate.ServerPause(ctx, l, time.Duration(1+r.IntN(3))*time.Millisecond)
			require.NoError(t, err)
			require.False(t, now.IsZero(), "a pause past every earlier one changed nothing")
			g.pauseUntil(now, until)
			mock.Set(now)
			model.PauseUntil(until)
			last = now
			paused++
			continue
		}
		no, delay, now, _, err := pgrate.Take(ctx, l, 0)
		require.NoError(t, err)
		if no {
			refused++
			require.True(t, g.at(last).After(last), "step %d: refused, but GCRA allows at %v", i, last)
			require.Less(t, model.TokensAt(last), 1.0, "step %d: refused, but the Bucket allows at %v", i, last)
			continue
		}
		allowed++
		require.Zero(t, delay)
		require.False(t, now.Before(last), "step %d: the server's clock went back", i)
		at := g.at(now)
		require.Equal(t, now, at, "step %d: allowed at %v, GCRA says %v", i, now, at)
		g.take(at)
		if ready, _ := model.ReadyAt(now, 1); ready.Sub(now) > time.Microsecond {
			t.Fatalf("step %d: allowed at %v, the Bucket says %v", i, now, ready)
		}
		model.AllowN(now, 1)
		last = now
	}
	t.Logf("allowed %d, refused %d, paused %d", allowed, refused, paused)
	require.Positive(t, refused, "the sequence never filled the bucket")
	require.Positive(t, allowed)
}

// TestWaitDelaysMatchModel: takes that accept a delay, of any length or up
// to a bound, get the delay GCRA gives at the server's clock of the
// reply, and a take refused for its bound would have come later than it.
func TestWaitDelaysMatchModel(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	ctx := context.Background()
	// 50 a second: slow enough that the takes outrun the refill, and some
	// wait, even when a round trip takes several milliseconds.
	l := newBucket(t, pool, pgrate.BucketConfig{Rate: 50, Burst: 4, Name: "model", Schema: freshSchema(t, pool)})
	g := &gcra{interval: pgrate.Interval(l), span: pgrate.Span(l)}

	r := rand.New(rand.NewPCG(3, 4))
	var last time.Time
	delayed, refused := 0, 0
	for i := range 400 {
		most := time.Duration(-1)
		switch r.IntN(3) {
		case 0:
			most = 0
		case 1:
			most = time.Duration(r.IntN(5000)) * time.Microsecond
		}
		no, delay, now, tat, err := pgrate.Take(ctx, l, most)
		require.NoError(t, err)
		if no {
			refused++
			// Refused at a clock at or past last, so later than most
			// from it, and so from last.
			require.Greater(t, g.at(last).Sub(last), most, "step %d: refused for %v", i, most)
			continue
		}
		at := g.at(now)
		require.Equal(t, at.Sub(now), delay, "step %d: delay at %v", i, now)
		if most >= 0 {
			require.LessOrEqual(t, delay, most, "step %d", i)
		}
		g.take(at)
		require.Equal(t, g.tat, tat, "step %d: tat", i)
		if delay > 0 {
			delayed++
		}
		last = now
		if i%50 == 49 { // let the bucket fill again, on the server's clock
			time.Sleep(g.tat.Sub(now))
		}
	}
	t.Logf("delayed %d, refused %d", delayed, refused)
	require.Positive(t, delayed)
	require.Positive(t, refused)
}

// TestTakesMatchModel: rate_takes, which the calls of one value that come
// at once share, takes each event as GCRA takes them one after another at
// the server's clock of its reply, refusing those whose delay is more
// than they accept; a bucket with no row is full.
func TestTakesMatchModel(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	ctx := context.Background()
	l := newBucket(t, pool, pgrate.BucketConfig{Rate: 1000, Burst: 3, Name: "model", Schema: freshSchema(t, pool)})
	g := &gcra{interval: pgrate.Interval(l), span: pgrate.Span(l)}

	r := rand.New(rand.NewPCG(5, 6))
	taken, refused := 0, 0
	for i := range 100 {
		most := make([]time.Duration, 1+r.IntN(8))
		for j := range most {
			switch r.IntN(3) {
			case 0:
				most[j] = 0
			case 1:
				most[j] = time.Duration(r.IntN(4000)) * time.Microsecond
			default:
				most[j] = -1
			}
		}
		no, delay, now, tat, err := pgrate.Takes(ctx, l, most)
		require.NoError(t, err)
		require.Len(t, no, len(most))
		for j := range most {
			require.Equal(t, now[0], now[j], "step %d: one clock for the flight", i)
			at := g.at(now[j])
			if m := most[j]; m >= 0 && at.Sub(now[j]) > m {
				require.True(t, no[j], "step %d, event %d: taken with a delay of %v, more than %v", i, j, at.Sub(now[j]), m)
				refused++
				continue
			}
			require.False(t, no[j], "step %d, event %d: refused", i, j)
			require.Equal(t, at.Sub(now[j]), delay[j], "step %d, event %d: delay", i, j)
			g.take(at)
			require.Equal(t, g.tat, tat[j], "step %d, event %d: tat", i, j)
			taken++
		}
		if i%20 == 19 { // let the bucket fill again, on the server's clock
			time.Sleep(g.tat.Sub(now[0]))
		}
	}
	t.Logf("taken %d, refused %d", taken, refused)
	require.Positive(t, refused)
}
