package storetest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testOperateDropKey: DropKey moves every value of a key, those out on a
// lease and of an open burst included, in Add order, to one dead letter
// with the reason and the key's attempt, and ends its lease: the holder's
// Finish and Extend are refused, and the key's next lease has a larger
// fence. The values no longer count for AddParams.MaxValues. A key
// without values moves none and leaves no dead letter; a pause stays.
func testOperateDropKey(f *fixture) {
	op := f.operator()
	dl, _ := f.s.(store.DeadLetters)
	in, _ := f.s.(store.Inspector)
	hour := time.Hour
	f.add("k", "k1", "k2")
	l := f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	f.finish(l, store.Outcome{Kind: store.Retry, Err: "first"})
	l = f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	f.values(l, "k", "k1")
	require.Equal(f.t, 2, l.Attempt)
	f.add("k", "k3")
	f.addP("k", store.AddParams{Wait: hour}, "k4")
	f.add("o", "o1")

	b := time.Now()
	f.dropKey(op, "k", "bad data", 4)
	a := time.Now()
	f.lost(l, store.Outcome{Kind: store.Ack})
	f.lost(l, store.Outcome{Kind: store.Drop, Err: "again"})
	require.Equal(f.t, store.Stats{Values: 1, Keys: 1, Ready: 1, Dead: deadCount(dl, 1)}, f.stats(),
		"the key holds nothing")
	if in != nil {
		f.noKey(in, f.q, "k")
	}
	var last uint64
	if dl != nil {
		ds := f.list(dl, f.q, 0, 10)
		require.Len(f.t, ds, 1, "one dead letter")
		d := ds[0]
		require.Equal(f.t, "k", d.Key)
		require.Equal(f.t, []string{"k1", "k2", "k3", "k4"}, strs(d.Values), "every value, in Add order")
		require.Equal(f.t, "bad data", d.Err)
		require.Equal(f.t, 2, d.Attempt, "the attempt of the lease out")
		f.between(d.At, b, a, "At of the dead letter: the DropKey")
		last = d.ID
	}
	f.dropKey(op, "k", "nothing", 0)
	f.dropKey(op, "absent", "nothing", 0)

	// The key goes on, with a larger fence; the values left the bound.
	require.NoError(f.t, f.s.Add(f.ctx, f.q, "k", bytesOf([]string{"k5"}), store.AddParams{MaxValues: 2}),
		"the dropped values no longer count for MaxValues")
	ls := f.claimAll(3, "o", "k")
	f.values(ls[1], "k", "k5")
	require.Equal(f.t, 1, ls[1].Attempt)
	require.Greater(f.t, ls[1].Fence, l.Fence, "the fence of the key's next lease")
	for _, l := range ls {
		f.ack(l, false)
	}

	// A retried key that is not leased, and a key never leased: their
	// attempts; a paused key stays paused.
	f.add("r", "r1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Retry, After: hour, Err: "boom"})
	f.add("r", "r2")
	f.dropKey(op, "r", "retried", 2)
	op2 := f.operator()
	f.pauseKey(op2, "p", true)
	f.add("p", "p1")
	f.dropKey(op, "p", "paused", 1)
	require.Equal(f.t, store.Stats{PausedKeys: 1, Dead: deadCount(dl, 3)}, f.stats())
	if in != nil {
		info, ok, err := in.Key(f.ctx, f.q, "p")
		require.NoError(f.t, err)
		require.True(f.t, ok)
		require.Equal(f.t, store.KeyInfo{Key: "p", Paused: true}, info, "a dropped key stays paused")
	}
	f.add("p", "p2")
	f.none()
	f.resumeKey(op, "p", true)
	lp := f.claimOne(one())
	f.values(lp, "p", "p2")
	f.ack(lp, false)
	if dl != nil {
		ds := f.list(dl, f.q, last, 10)
		require.Len(f.t, ds, 2)
		require.Equal(f.t, []string{"r1", "r2"}, strs(ds[0].Values))
		require.Equal(f.t, "retried", ds[0].Err)
		require.Equal(f.t, 1, ds[0].Attempt, "the attempt that failed")
		require.Equal(f.t, []string{"p1"}, strs(ds[1].Values))
		require.Equal(f.t, "paused", ds[1].Err)
		require.Zero(f.t, ds[1].Attempt, "a batch never leased")
		require.Greater(f.t, ds[1].ID, ds[0].ID)
	}
}

// deadCount is n where the engine keeps dead letters, else 0.
func deadCount(dl store.DeadLetters, n int) int {
	if dl == nil {
		return 0
	}
	return n
}
