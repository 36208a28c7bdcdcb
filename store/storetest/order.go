package storetest

import (
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testOrder: a key's values are leased in Add order, across Adds, batches
// and a Drop, and never skipped.
func testOrder(f *fixture) {
	f.add("k", "1", "2")
	f.add("k", "3")
	l := f.claimOne(one())
	f.values(l, "k", "1", "2", "3")
	require.Equal(f.t, 1, l.Attempt)
	f.add("k", "4")
	f.add("k", "5", "6")
	f.ack(l, true)

	two := store.ClaimParams{Keys: 1, MaxBatch: 2, TTL: ttl}
	l = f.claimOne(two)
	f.values(l, "k", "4", "5")
	f.ack(l, true)
	l = f.claimOne(two)
	f.values(l, "k", "6")
	f.ack(l, false)

	f.add("k", "7", "8", "9")
	l = f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	f.values(l, "k", "7")
	require.True(f.t, f.finish(l, store.Outcome{Kind: store.Drop, Err: "bad"}))
	l = f.claimOne(one())
	f.values(l, "k", "8", "9")
	require.Equal(f.t, 1, l.Attempt)
	f.ack(l, false)
	require.Equal(f.t, store.Never, f.none())
}

// testMaxBatch: MaxBatch 1 takes one value, N at most N, 0 all the ready
// ones.
func testMaxBatch(f *fixture) {
	f.add("k", "1", "2", "3", "4", "5", "6")
	l := f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	f.values(l, "k", "1")
	f.ack(l, true)
	l = f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 3, TTL: ttl})
	f.values(l, "k", "2", "3", "4")
	f.ack(l, true)
	l = f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 0, TTL: ttl})
	f.values(l, "k", "5", "6")
	f.ack(l, false)
	f.add("k", "7", "8")
	l = f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 10, TTL: ttl})
	f.values(l, "k", "7", "8")
	f.ack(l, false)
}

// testKeysPerClaim: one Claim leases several keys, oldest-ready first, and
// its next says whether one is left.
func testKeysPerClaim(f *fixture) {
	f.add("a", "1")
	f.add("b", "2")
	f.add("c", "3")
	ls, next := f.claim(store.ClaimParams{Keys: 2, TTL: ttl})
	require.Len(f.t, ls, 2)
	f.values(ls[0], "a", "1")
	f.values(ls[1], "b", "2")
	require.Zero(f.t, next, "c is still ready")
	more, next := f.claim(store.ClaimParams{Keys: 5, TTL: ttl})
	require.Len(f.t, more, 1)
	f.values(more[0], "c", "3")
	require.Positive(f.t, next, "nothing is ready")
	require.LessOrEqual(f.t, next, ttl, "the leases lapse within their TTL")
	require.NotEqual(f.t, ls[0].Fence, ls[1].Fence)
	for _, l := range append(ls, more...) {
		f.ack(l, false)
	}
	ls, next = f.claim(store.ClaimParams{Keys: 3, TTL: ttl})
	require.Empty(f.t, ls)
	require.Equal(f.t, store.Never, next)
}

// testQueuesAreSeparate: the same key in two queues is two keys.
func testQueuesAreSeparate(f *fixture) {
	b := f.other("b")
	f.add("k", "1")
	ls, next, err := f.s.Claim(f.ctx, b, one())
	require.NoError(f.t, err)
	require.Empty(f.t, ls)
	require.Equal(f.t, store.Never, next)
	require.NoError(f.t, f.s.Add(f.ctx, b, "k", bytesOf([]string{"x"}), store.AddParams{}))

	la := f.claimOne(one())
	f.values(la, "k", "1")
	ls, _, err = f.s.Claim(f.ctx, b, one())
	require.NoError(f.t, err)
	require.Len(f.t, ls, 1, "the key is leased in the other queue only")
	require.Equal(f.t, b, ls[0].Queue)
	require.Equal(f.t, []string{"x"}, strs(ls[0].Values))

	st, err := f.s.Stats(f.ctx, b)
	require.NoError(f.t, err)
	require.Equal(f.t, 1, st.Values)
	f.ack(la, false)
	f.ack(ls[0], false)
}
