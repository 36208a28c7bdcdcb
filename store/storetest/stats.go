package storetest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testStats: one key in each state, counted where the store doc says.
func testStats(f *fixture) {
	_, dead := f.s.(store.DeadLetters)
	require.Equal(f.t, store.Stats{}, f.stats(), "an unused queue")

	f.add("c", "c1")
	f.claimOne(one()) // leased

	f.add("d", "d1")
	l := f.claimOne(one())
	f.add("d", "d2", "d3")
	f.finish(l, store.Outcome{Kind: store.Retry, After: time.Minute}) // retrying, 2 behind

	f.add("e", "e1", "e2", "e3")
	l = f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	f.finish(l, store.Outcome{Kind: store.Hold}) // held, 3 values

	f.add("f", "f1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Drop, Err: "x"}) // dead

	f.add("g", "g1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Defer, After: time.Minute}) // deferred

	f.add("a", "a1", "a2")                                      // ready
	f.addP("b", store.AddParams{Wait: time.Minute}, "b1", "b2") // pending

	want := store.Stats{
		Values: 1 + 3 + 3 + 1 + 2 + 2, Keys: 6,
		Ready: 1, Pending: 1, Leased: 1, Retrying: 1, Behind: 2, Held: 1, HeldValues: 3,
	}
	if dead {
		want.Dead = 1
	}
	require.Equal(f.t, want, f.stats())
}

// testStatsLapsedAndPending: a lapsed lease counts as ready; a leased key
// with an open burst behind it counts as leased and pending.
func testStatsLapsedAndPending(f *fixture) {
	short := 2 * f.tick
	f.add("k", "1")
	b := time.Now()
	f.claimOne(store.ClaimParams{Keys: 1, TTL: short})
	f.addP("k", store.AddParams{Wait: time.Minute}, "2")
	st := f.stats()
	if since := time.Since(b); since >= short {
		f.slow(since, short, "the lease may have lapsed before Stats that must count it leased")
	}
	require.Equal(f.t, store.Stats{Values: 2, Keys: 1, Leased: 1, Pending: 1}, st)
	f.pause(short + f.tick/2)
	require.Equal(f.t, store.Stats{Values: 2, Keys: 1, Ready: 1, Pending: 1}, f.stats())
}
