package storetest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// keysOf returns the keys of ls, in order.
func keysOf(ls []store.Lease) []string {
	keys := make([]string, len(ls))
	for i, l := range ls {
		keys[i] = l.Key
	}
	return keys
}

// testFairnessOldestReadyFirst: keys are leased in the order they became
// ready; more values for a waiting key keep its place.
func testFairnessOldestReadyFirst(f *fixture) {
	for _, k := range []string{"a", "b", "c", "d"} {
		f.add(k, k)
	}
	f.add("a", "a2")
	var got []string
	for range 4 {
		l := f.claimOne(one())
		got = append(got, l.Key)
		defer f.ack(l, false)
	}
	require.Equal(f.t, []string{"a", "b", "c", "d"}, got)
}

// testFairnessRerunAtTail: a key that ran and has values left goes behind
// the keys already waiting.
func testFairnessRerunAtTail(f *fixture) {
	f.add("a", "a1", "a2")
	f.add("b", "b1")
	l := f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	f.values(l, "a", "a1")
	f.add("c", "c1")
	f.ack(l, true)
	ls, _ := f.claim(store.ClaimParams{Keys: 3, TTL: ttl})
	require.Equal(f.t, []string{"b", "c", "a"}, keysOf(ls))
	f.values(ls[2], "a", "a2")
	for _, l := range ls {
		f.ack(l, false)
	}
}

// testFairnessDelays: a retried key is ready when its delay passes, a
// burst when it comes due, a released key when released: each takes its
// place in the ready order then.
func testFairnessDelays(f *fixture) {
	delay := 3 * f.tick
	two := store.ClaimParams{Keys: 2, TTL: ttl}

	f.add("x", "x1")
	before := time.Now()
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Retry, After: delay})
	after := time.Now()
	f.add("y", "y1")
	l := f.claimOne(one())
	if l.Key != "y" {
		require.False(f.t, time.Now().Before(before.Add(delay)), "a retried key came before its delay")
		f.slow(time.Since(before), delay, "the retry delay passed before the next Claim")
	}
	f.ack(l, false)
	f.pauseUntil(after.Add(delay + f.tick/2))
	f.add("z", "z1")
	ls, _ := f.claim(two)
	require.Equal(f.t, []string{"x", "z"}, keysOf(ls), "x was ready when its delay passed, before z came")
	require.Equal(f.t, 2, ls[0].Attempt)
	for _, l := range ls {
		f.ack(l, false)
	}

	f.addP("p", store.AddParams{Wait: delay}, "p1")
	f.pauseUntil(time.Now().Add(delay + f.tick/2))
	f.add("r", "r1")
	ls, _ = f.claim(two)
	require.Equal(f.t, []string{"p", "r"}, keysOf(ls), "p's burst came due before r came")
	for _, l := range ls {
		f.ack(l, false)
	}

	f.add("h", "h1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Hold})
	f.add("i", "i1")
	ok, err := f.s.Release(f.ctx, f.q, "h")
	require.NoError(f.t, err)
	require.True(f.t, ok)
	ls, _ = f.claim(two)
	require.Equal(f.t, []string{"i", "h"}, keysOf(ls), "a released key goes to the tail")
	for _, l := range ls {
		f.ack(l, false)
	}
}
