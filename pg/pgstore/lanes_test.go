package pgstore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// The operators on a key of lanes (several leases out, lanes.go):
// RetryNow makes its retried batch ready now, which is leased again as it
// was; DropKey moves the values of its lanes and of its head to one dead
// letter, in order, ends its leases, and leaves the queue's count exact.
func TestOperatorsOnKeyOfLanes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := instance(t, freshSchema(t, connect(t, appName(t))))
	p := store.ClaimParams{Keys: 2, MaxBatch: 1, TTL: ttl, PerKey: 2}
	require.NoError(t, s.Add(ctx, "q", "k", vals("1", "2", "3", "4"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Len(t, ls, 2)

	more, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Retry, After: time.Hour, Err: "later"})
	require.NoError(t, err)
	require.True(t, more)
	none, _, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Empty(t, none, "the retried batch waits for its delay, and the values behind it too")
	ok, err := s.RetryNow(ctx, "q", "k")
	require.NoError(t, err)
	require.True(t, ok, "RetryNow of a key whose first lane waits for a Retry")
	again, _, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Len(t, again, 1)
	require.Equal(t, vals("1"), again[0].Values)
	require.Equal(t, 2, again[0].Attempt)
	ok, err = s.RetryNow(ctx, "q", "k")
	require.NoError(t, err)
	require.False(t, ok, "RetryNow of a key with no batch waiting for a Retry")

	_, err = s.Finish(ctx, ls[1], store.Outcome{Kind: store.Ack}) // "2" goes: a gap
	require.NoError(t, err)
	n, err := s.DropKey(ctx, "q", "k", "gone")
	require.NoError(t, err)
	require.Equal(t, 3, n)
	dls, err := s.DeadLetters(ctx, "q", 0, 10)
	require.NoError(t, err)
	require.Len(t, dls, 1)
	require.Equal(t, vals("1", "3", "4"), dls[0].Values)
	_, err = s.Finish(ctx, again[0], store.Outcome{Kind: store.Ack})
	require.ErrorIs(t, err, store.ErrLeaseLost, "the lease of a dropped key")
	requireEmptyAndCounted(t, s)
}

// A key of lanes that takes an Add to a burst (AddParams.Wait), while a lease is out
// and a slot free, keeps watching for the lapse of that lease: it is
// ready when the lease lapses, not only when the burst is due.
func TestLanesLapseUnderABurst(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := instance(t, freshSchema(t, connect(t, appName(t))))
	short := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: 300 * time.Millisecond, PerKey: 2}
	require.NoError(t, s.Add(ctx, "q", "k", vals("1"), store.AddParams{}))
	l, _, err := s.Claim(ctx, "q", short)
	require.NoError(t, err)
	require.Len(t, l, 1)
	require.NoError(t, s.Add(ctx, "q", "k", vals("2"), store.AddParams{Wait: time.Hour}))
	deadline := time.Now().Add(10 * time.Second)
	for {
		ls, _, err := s.Claim(ctx, "q", short)
		require.NoError(t, err)
		if len(ls) > 0 {
			require.Equal(t, vals("1"), ls[0].Values, "the lapsed batch, leased again")
			require.Equal(t, 2, ls[0].Attempt)
			break
		}
		require.True(t, time.Now().Before(deadline), "the lapsed lease's batch was not leased again")
		time.Sleep(50 * time.Millisecond)
	}
}

// The Acks of leases of keys of lanes that come while a flight flies share
// the next one, as the others do (sharedfinish.go): one finish_lanes for
// all of them, two lanes of one key among them, each with its own result,
// and one claim_lanes whose leases go one to each, with their own fences,
// no more than PerKey of a key at once, in Add order. A stale lease gets
// ErrLeaseLost and changes nothing; the queue's count stays exact.
func TestAcksOfLanesShareAFlight(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	connect(t, appName(t)) // skips without a server
	cfg, err := pgxpool.ParseConfig(serverURL())
	require.NoError(t, err)
	cfg.MaxConns = 1
	flights := &statementCounter{contains: "ack_last_lanes_v2("}
	cfg.ConnConfig.Tracer = flights
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: freshSchema(t, pool)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	flights.n.Store(0) // the migrations' text names ack_last_lanes_v2 too

	p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl, PerKey: 2}
	require.NoError(t, s.Add(ctx, "q", "k", vals("k1", "k2", "k3", "k4"), store.AddParams{}))
	require.NoError(t, s.Add(ctx, "q", "j", vals("j1", "j2"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 3, MaxBatch: 1, TTL: ttl, PerKey: 2})
	require.NoError(t, err)
	require.Len(t, ls, 3)
	stale := ls[0]
	stale.Fence += 100 // a fence not issued

	type result struct {
		i      int
		more   bool
		leases []store.Lease
		err    error
	}
	calls := append(append([]store.Lease{}, ls...), stale)
	release := holdFlights(t, s, pool, "q")
	results := make(chan result, len(calls))
	for i, l := range calls {
		go func() {
			more, got, _, err := s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Ack}, p)
			results <- result{i, more, got, err}
		}()
	}
	release(len(calls))
	got := make([]result, len(calls))
	for range calls {
		r := <-results
		got[r.i] = r
	}
	// The first flight, one for the Acks that came while it flew, and one
	// more for the stale lease, which then goes alone.
	require.LessOrEqual(t, flights.n.Load(), int64(3), "flights for %d Acks", len(calls))
	require.Positive(t, flights.n.Load())

	require.ErrorIs(t, got[3].err, store.ErrLeaseLost)
	require.Empty(t, got[3].leases)
	next := map[string][]store.Lease{}
	for _, r := range got[:3] {
		require.NoError(t, r.err)
		require.True(t, r.more, "each key has values left")
		require.Len(t, r.leases, 1)
		l := r.leases[0]
		next[l.Key] = append(next[l.Key], l)
	}
	require.Len(t, next["j"], 1)
	require.Equal(t, vals("j2"), next["j"][0].Values)
	k := next["k"]
	require.Len(t, k, 2, "two leases of k at once, PerKey")
	if k[0].Fence > k[1].Fence {
		k[0], k[1] = k[1], k[0]
	}
	require.NotEqual(t, k[0].Fence, k[1].Fence)
	require.Equal(t, vals("k3"), k[0].Values, "leased in Add order")
	require.Equal(t, vals("k4"), k[1].Values)
	none, _, err := s.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Empty(t, none, "no more than PerKey leases of k, and nothing else ready")

	for _, l := range append(k, next["j"][0]) {
		_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
		require.NoError(t, err)
	}
	requireEmptyAndCounted(t, s)
}

// Instances of a version before migration 014 may run beside this one
// while a service upgrades, calling claim_lanes and finish_lanes (009,
// 012) on the keys of lanes that this version's functions take and end;
// instances of a version before migration 016, calling lease_lanes and
// ack_lanes (014); and instances of a version before migration 018,
// calling lease_free_lanes and ack_last_lanes (016). A lease taken by
// either ends by the other, every value is leased once, each key's in Add
// order, with fences that grow and no more than PerKey leases of a key
// out at once, and the queue's count stays exact.
func TestLanesBesideTheFunctionsBefore(t *testing.T) {
	t.Parallel()
	t.Run("009 and 012", func(t *testing.T) {
		t.Parallel()
		lanesBesideOld(t, `SELECT o_found, o_key, o_fence, o_vals FROM {fn}.claim_lanes($1, $2, 1, $3, 'old', 2, false)`,
			`SELECT count(*) FROM {fn}.finish_lanes($1, $2, $3, '{0}', 33)`)
	})
	t.Run("014", func(t *testing.T) {
		t.Parallel()
		lanesBesideOld(t, `SELECT o_found, o_key, o_fence, o_vals FROM {fn}.lease_lanes($1, $2, 1, $3, 'old', 2)`,
			`SELECT count(*) FROM {fn}.ack_lanes($1, $2, $3, '{0}', 33)`)
	})
	t.Run("016", func(t *testing.T) {
		t.Parallel()
		lanesBesideOld(t, `SELECT o_found, o_key, o_fence, o_vals FROM {fn}.lease_free_lanes($1, $2, 1, $3, 'old', 2)`,
			`SELECT count(*) FROM {fn}.ack_last_lanes($1, $2, $3, '{0}', 33)`)
	})
}

// lanesBesideOld is TestLanesBesideTheFunctionsBefore with the claim and
// the Ack of a version before, as its lanes.go makes them ({fn} stands
// for the schema): claim takes the queue, the leases wanted and the TTL;
// ack the queue, a key and its fence, as arrays of one.
func lanesBesideOld(t *testing.T, claim, ack string) {
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s := instance(t, schema)
	fn := pgx.Identifier{schema}.Sanitize()
	claim, ack = strings.ReplaceAll(claim, "{fn}", fn), strings.ReplaceAll(ack, "{fn}", fn)
	p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl, PerKey: 2}
	oldClaim := func(want int) []store.Lease {
		rows, err := pool.Query(ctx, claim, "q", want, ttl)
		require.NoError(t, err)
		var ls []store.Lease
		for rows.Next() {
			var (
				found bool
				key   []byte
				l     = store.Lease{Queue: "q"}
			)
			require.NoError(t, rows.Scan(&found, &key, &l.Fence, &l.Values))
			if found {
				l.Key = string(key)
				ls = append(ls, l)
			}
		}
		require.NoError(t, rows.Err())
		return ls
	}
	oldAck := func(l store.Lease) {
		var ended int
		require.NoError(t, pool.QueryRow(ctx, ack, "q", [][]byte{[]byte(l.Key)}, []int64{int64(l.Fence)}).Scan(&ended))
		require.Equal(t, 1, ended, "the Ack before ends a lease of this version")
	}
	want := map[string][]string{"k": {"1", "2", "3", "4", "5", "6", "7"}, "j": {"j1", "j2", "j3"}}
	for _, k := range []string{"k", "j"} {
		require.NoError(t, s.Add(ctx, "q", k, vals(want[k]...), store.AddParams{}))
	}
	got := map[string][]string{}
	fences := map[string]uint64{}
	var out []store.Lease
	take := func(ls []store.Lease) {
		for _, l := range ls {
			n := 0
			for _, o := range out {
				if o.Key == l.Key {
					n++
				}
			}
			require.Less(t, n, 2, "PerKey 2: a third lease of %s", l.Key)
			require.Greater(t, l.Fence, fences[l.Key], "fences of %s grow", l.Key)
			fences[l.Key] = l.Fence
			require.Len(t, l.Values, 1)
			got[l.Key] = append(got[l.Key], string(l.Values[0]))
			out = append(out, l)
		}
	}
	take(oldClaim(3))
	for step := 0; len(out) > 0; step++ {
		require.Less(t, step, 50)
		l := out[0]
		out = out[1:]
		if step%2 == 0 { // the new ack and claim end the old's lease
			_, next, _, err := s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Ack}, p)
			require.NoError(t, err)
			take(next)
		} else { // and the old end the new's
			oldAck(l)
			take(oldClaim(1))
		}
		if len(out) < 2 {
			ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 2, MaxBatch: 1, TTL: ttl, PerKey: 2})
			require.NoError(t, err)
			take(ls)
		}
	}
	require.Equal(t, want, got, "every value once, in Add order")
	requireEmptyAndCounted(t, s)
}

// One Claim with PerKey leases round by round: each ready key's first
// batch, in the ready order, before any key's second, as if a key that
// took a lease went behind the keys already waiting; no key beyond
// PerKey, and no more leases than Keys.
func TestLanesClaimRoundByRound(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := instance(t, freshSchema(t, connect(t, appName(t))))
	require.NoError(t, s.Add(ctx, "q", "a", vals("a1", "a2", "a3", "a4"), store.AddParams{}))
	require.NoError(t, s.Add(ctx, "q", "b", vals("b1"), store.AddParams{}))
	require.NoError(t, s.Add(ctx, "q", "c", vals("c1", "c2"), store.AddParams{}))
	claim := func(keys int) []string {
		ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: keys, MaxBatch: 1, TTL: ttl, PerKey: 2})
		require.NoError(t, err)
		var got []string
		for _, l := range ls {
			require.Len(t, l.Values, 1)
			got = append(got, string(l.Values[0]))
		}
		return got
	}
	require.Equal(t, []string{"a1", "b1"}, claim(2), "the first keys' first batches")
	require.Equal(t, []string{"c1", "a2", "c2"}, claim(10), "c's first, then the second of those that may take one")
	require.Empty(t, claim(10), "a and c have PerKey leases out, b none left")
}

// requireEmptyAndCounted checks that queue "q" of s holds nothing, and
// that its count of values is exact: MaxValues 2 takes two values and
// refuses a third.
func requireEmptyAndCounted(t *testing.T, s store.Store) {
	t.Helper()
	ctx := t.Context()
	st, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Zero(t, st.Values)
	require.Zero(t, st.Keys)
	require.NoError(t, s.Add(ctx, "q", "k", vals("a", "b"), store.AddParams{MaxValues: 2}), "the count is exact")
	require.ErrorIs(t, s.Add(ctx, "q", "k", vals("c"), store.AddParams{MaxValues: 2}), store.ErrFull)
}
