package pgrate_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgrate"
	"github.com/pacerkit/pacer/ratelimit"
)

// TestKeyedTakeKey: TakeKey takes a key's token when its shared bucket
// has one and otherwise tells the wait without taking; PeekKey only
// tells; both see another instance's takes and pauses of the key.
func TestKeyedTakeKey(t *testing.T) {
	t.Parallel()
	p1, p2 := connect(t), connect(t)
	cfg := pgrate.KeyedConfig{Rate: 0.5, Burst: 2, Name: "accounts", Schema: freshSchema(t, p1)} // a token every 2 s
	a, b := newKeyed(t, p1, cfg), newKeyed(t, p2, cfg)
	ctx := context.Background()

	w, err := a.PeekKey(ctx, "alice")
	require.NoError(t, err)
	require.Zero(t, w)
	for range 2 {
		w, err = a.TakeKey(ctx, "alice")
		require.NoError(t, err)
		require.Zero(t, w)
	}
	w, err = b.TakeKey(ctx, "alice") // the other instance sees the bucket empty
	require.NoError(t, err)
	require.Greater(t, w, time.Second)
	require.LessOrEqual(t, w, 2*time.Second)
	w2, err := b.PeekKey(ctx, "alice") // the refused take took nothing
	require.NoError(t, err)
	require.InDelta(t, float64(w), float64(w2), float64(100*time.Millisecond))
	require.Equal(t, 2, keyAllowN(t, b, "bob", 3), "bob paid for alice")

	require.NoError(t, a.PauseKeyFor(ctx, "carol", time.Minute))
	w, err = b.TakeKey(ctx, "carol")
	require.NoError(t, err)
	require.Greater(t, w, 59*time.Second, "carol's pause did not hold another instance")
	require.NoError(t, a.PauseKeyFor(ctx, "carol", 0), "d <= 0 does nothing")

	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = a.TakeKey(done, "dave")
	require.ErrorIs(t, err, context.Canceled)
	_, err = a.PeekKey(done, "dave")
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, a.PauseKeyFor(done, "dave", time.Second), context.Canceled)
	require.ErrorIs(t, a.PauseKeyFor(done, "dave", 0), context.Canceled)
}

// TestTakeKeyWritesOnlyWhenTaken: PeekKey makes no row for a key that has
// none, and a refused TakeKey leaves its key's row as it was (the same
// row version), so deferring a key costs its row no write.
func TestTakeKeyWritesOnlyWhenTaken(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	schema := freshSchema(t, pool)
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 0.1, Burst: 1, Name: "accounts", Schema: schema})
	ctx := context.Background()

	w, err := k.PeekKey(ctx, "alice")
	require.NoError(t, err)
	require.Zero(t, w)
	require.Zero(t, rows(t, pool, schema), "PeekKey made a row")

	w, err = k.TakeKey(ctx, "alice")
	require.NoError(t, err)
	require.Zero(t, w)
	require.Equal(t, 1, rows(t, pool, schema))
	version := func() string {
		var v string
		require.NoError(t, pool.QueryRow(ctx,
			"SELECT xmin::text || ctid::text FROM "+pgx.Identifier{schema, "rate_buckets"}.Sanitize()).Scan(&v))
		return v
	}
	before := version()
	for range 3 {
		w, err = k.TakeKey(ctx, "alice")
		require.NoError(t, err)
		require.Greater(t, w, 9*time.Second)
	}
	require.Equal(t, before, version(), "a refused TakeKey wrote the row")
	require.NoError(t, k.PauseKeyFor(ctx, "alice", time.Minute))
	require.NotEqual(t, before, version(), "the row's version did not tell a write")
}

// TestTakeKeyMatchesKeyed: a sequence of TakeKeys, PeekKeys and pauses
// over a few keys gets from the server the waits that ratelimit.Keyed
// gives, fed with the server's clock that each reply carries: the same
// decisions, to the microsecond.
func TestTakeKeyMatchesKeyed(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	ctx := context.Background()
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 50, Burst: 3, Name: "model", Schema: freshSchema(t, pool)})
	require.Equal(t, 20*time.Millisecond, pgrate.KeyedInterval(k))
	require.Equal(t, 60*time.Millisecond, pgrate.KeyedSpan(k))
	mock := clock.NewMock()
	model, err := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{Rate: 50, Burst: 3, Clock: mock})
	require.NoError(t, err)

	keys := []string{"a", "b", "c"}
	r := rand.New(rand.NewPCG(7, 8))
	taken, refused, peeked, paused := 0, 0, 0, 0
	for i := range 900 {
		key := keys[r.IntN(len(keys))]
		if i%150 == 75 {
			now, until, err := pgrate.ServerPauseKey(ctx, k, key, time.Duration(1+r.IntN(30))*time.Millisecond+time.Duration(r.IntN(1000))*time.Microsecond)
			require.NoError(t, err)
			require.False(t, now.IsZero(), "step %d: a pause past every earlier one changed nothing", i)
			mock.Set(now)
			require.NoError(t, model.PauseKeyFor(ctx, key, until.Sub(now)))
			paused++
			continue
		}
		take := r.IntN(4) != 0
		now, at, err := pgrate.TryKey(ctx, k, key, take)
		require.NoError(t, err)
		require.False(t, at.Before(now), "step %d: conforms before the clock", i)
		mock.Set(now)
		var want time.Duration
		if take {
			want, err = model.TakeKey(ctx, key)
		} else {
			want, err = model.PeekKey(ctx, key)
			peeked++
		}
		require.NoError(t, err)
		require.Equal(t, want, at.Sub(now), "step %d: %s of %q at %v", i, map[bool]string{true: "take", false: "peek"}[take], key, now)
		switch {
		case !take:
		case want == 0:
			taken++
		default:
			refused++
		}
	}
	t.Logf("taken %d, refused %d, peeked %d, paused %d", taken, refused, peeked, paused)
	require.Positive(t, taken)
	require.Positive(t, refused, "the sequence never emptied a bucket")
}

// TestTakeKeyConcurrent: TakeKeys of one key that has no row yet, from
// many connections at once, take exactly Burst events between them: the
// takes that find the row missing together insert it once, and the
// others lock it and see the tokens taken.
func TestTakeKeyConcurrent(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 0.01, Burst: 3, Name: "accounts", Schema: freshSchema(t, pool)})
	ctx := context.Background()
	for round, key := range []string{"alice", "bob", "carol"} {
		var mu sync.Mutex
		zero := 0
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 12 {
			wg.Go(func() {
				<-start
				w, err := k.TakeKey(ctx, key)
				require.NoError(t, err)
				if w == 0 {
					mu.Lock()
					zero++
					mu.Unlock()
				} else {
					require.Greater(t, w, 90*time.Second)
				}
			})
		}
		close(start)
		wg.Wait()
		require.Equal(t, 3, zero, "round %d: %d of 12 TakeKeys took an event of a bucket of 3", round, zero)
	}
}
