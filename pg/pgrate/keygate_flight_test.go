package pgrate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgrate"
)

// One flight of TakeKey calls of several keys takes each key's event as
// rate_try would, in the order the calls came: a key that comes again
// sees its earlier takes, and a paused key is refused for its pause and
// holds no other key back.
func TestTakeKeyFlightOfSeveralKeys(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	ctx := context.Background()
	schema := freshSchema(t, pool)
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 0.1, Burst: 2, Name: "tries", Schema: schema, SweepEvery: -1}) // a token every 10 s
	w, err := k.TakeKey(ctx, "b")                                                                                  // b has one token left
	require.NoError(t, err)
	require.Zero(t, w)
	require.NoError(t, k.PauseKey(ctx, "p", time.Minute))

	h := pgrate.HoldTries(k)
	lead := h.Lead(t, ctx, "x")
	order := []string{"a", "b", "a", "p", "b", "a", "c"}
	var calls []<-chan pgrate.Taken
	for _, key := range order {
		calls = append(calls, h.Queue(t, ctx, key))
	}
	h.Open()
	require.Equal(t, pgrate.Taken{}, <-lead)
	var got []pgrate.Taken
	for _, c := range calls {
		got = append(got, <-c)
	}
	require.Equal(t, [][]string{order}, h.Seen(), "the calls that waited flew together, in order")
	for i, g := range got {
		require.NoError(t, g.Err, order[i])
	}
	for _, i := range []int{0, 1, 2, 6} {
		require.Zero(t, got[i].Wait, "%d: %s had a token", i, order[i])
	}
	require.Greater(t, got[3].Wait, 59*time.Second, "p's pause")
	for _, i := range []int{4, 5} {
		require.Greater(t, got[i].Wait, 9*time.Second, "%d: %s waits for a token", i, order[i])
		require.LessOrEqual(t, got[i].Wait, 10*time.Second)
	}
	w, err = k.PeekKey(ctx, "c")
	require.NoError(t, err)
	require.Zero(t, w, "c, burst 2, gave one token")
	w, err = k.PeekKey(ctx, "a")
	require.NoError(t, err)
	require.Greater(t, w, 9*time.Second, "the refused take of a took nothing, and the two took two")
	require.LessOrEqual(t, w, 10*time.Second)
	require.Equal(t, 5, rows(t, pool, schema), "x, a, b, c, p")
}

// A TakeKey whose ctx ends while it waits for a flight leaves with the
// ctx's error, takes nothing, and the calls behind it still fly.
func TestTakeKeyCancelledWhileWaiting(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	ctx := context.Background()
	schema := freshSchema(t, pool)
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 0.1, Burst: 1, Name: "tries", Schema: schema, SweepEvery: -1})
	h := pgrate.HoldTries(k)
	lead := h.Lead(t, ctx, "x")
	gone, cancel := context.WithCancel(ctx)
	bob := h.Queue(t, gone, "bob")
	carol := h.Queue(t, ctx, "carol")
	dave := h.Queue(t, ctx, "dave")
	cancel()
	require.Equal(t, pgrate.Taken{Err: context.Canceled}, <-bob)
	h.Open()
	require.Equal(t, pgrate.Taken{}, <-lead)
	require.Equal(t, pgrate.Taken{}, <-carol)
	require.Equal(t, pgrate.Taken{}, <-dave)
	require.Equal(t, [][]string{{"carol", "dave"}}, h.Seen())
	require.Equal(t, 3, rows(t, pool, schema), "bob's bucket was not touched")
}

// A flight that fails on the server gives each of its calls the error,
// wrapped with the Keyed's name and the call's own key.
func TestTakeKeyFlightServerFails(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	ctx := context.Background()
	schema := freshSchema(t, pool)
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 10, Burst: 1, Name: "tries", Schema: schema, SweepEvery: -1})
	h := pgrate.HoldTries(k)
	lead := h.Lead(t, ctx, "x")
	a := h.Queue(t, ctx, "a")
	b := h.Queue(t, ctx, "b")
	_, err := pool.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE") // the functions are gone
	require.NoError(t, err)
	h.Open()
	require.Error(t, (<-lead).Err)
	for key, ch := range map[string]<-chan pgrate.Taken{"a": a, "b": b} {
		got := <-ch
		require.Error(t, got.Err, key)
		require.Contains(t, got.Err.Error(), `pgrate: TakeKey on "tries", key "`+key+`": `)
	}
	require.Equal(t, [][]string{{"a", "b"}}, h.Seen())
}

// Many TakeKey calls of a few keys at once, through two Keyed values,
// whose flights share keys, let through exactly each key's burst when no
// token comes back meanwhile, and never deadlock.
func TestTakeKeysAtOnceKeepEachBurst(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	const keys, burst, callers = 5, 4, 40
	cfg := pgrate.KeyedConfig{Rate: 0.01, Burst: burst, Name: "tries", Schema: freshSchema(t, pool), SweepEvery: -1}
	ks := []*pgrate.Keyed{newKeyed(t, pool, cfg), newKeyed(t, pool, cfg)} // two processes, whose flights lock rows at once
	var taken [keys]atomic.Int64
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			key := string(rune('a' + i%keys))
			for range 3 {
				w, err := ks[i%2].TakeKey(context.Background(), key)
				if err != nil {
					t.Error(err)
					return
				}
				if w == 0 {
					taken[i%keys].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for i := range taken {
		require.Equal(t, int64(burst), taken[i].Load(), "key %d", i)
	}
}
