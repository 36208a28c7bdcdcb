package storetest

import (
	"slices"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testInspectValues: Values returns a key's values from its head, in the
// order they will be leased, leased and debouncing ones included, at most
// limit of them, with the times the engine added them; a limit below 1
// returns none, and changing what it returned changes nothing stored.
func testInspectValues(f *fixture) {
	in := f.inspector()
	require.Empty(f.t, f.storedValues(in, f.q, "k", 10), "Values of a key without values")

	b1 := time.Now()
	require.NoError(f.t, f.s.Add(f.ctx, f.q, "k", [][]byte{[]byte("1"), {}, {0, 0xff}}, store.AddParams{}))
	a1 := time.Now()
	b2 := time.Now()
	f.add("k", "4")
	a2 := time.Now()
	f.addP("k", store.AddParams{Wait: time.Hour}, "5")
	want := [][]byte{[]byte("1"), {}, {0, 0xff}, []byte("4"), []byte("5")}

	vs := f.storedValues(in, f.q, "k", 10)
	require.True(f.t, sameBytes(want, valuesOf(vs)), "Values: %q, want %q", valuesOf(vs), want)
	sameTime(f, vs[0].Added, vs[1].Added, "values of one Add were added at once")
	sameTime(f, vs[0].Added, vs[2].Added, "values of one Add were added at once")
	f.between(vs[0].Added, b1, a1, "Added of a value")
	f.between(vs[3].Added, b2, a2, "Added of a value")
	require.False(f.t, vs[3].Added.Before(vs[2].Added), "a later Add's value was added before an earlier one's")
	require.False(f.t, vs[4].Added.Before(vs[3].Added), "a later Add's value was added before an earlier one's")
	info := f.keyInfo(in, "k")
	require.Equal(f.t, 5, info.Values)

	require.True(f.t, sameBytes(want[:2], valuesOf(f.storedValues(in, f.q, "k", 2))), "Values with limit 2")
	require.True(f.t, sameBytes(want, valuesOf(f.storedValues(in, f.q, "k", 5))), "Values with limit 5")
	require.Empty(f.t, f.storedValues(in, f.q, "k", 0), "Values with limit 0")
	require.Empty(f.t, f.storedValues(in, f.q, "k", -1), "Values with limit -1")
	require.Empty(f.t, f.storedValues(in, f.other("b"), "k", 10), "Values of the key in another queue")

	vs[0].Value[0] = 'x'
	require.True(f.t, sameBytes(want, valuesOf(f.storedValues(in, f.q, "k", 10))), "Values after its result was changed")

	// Leased, retried: all still there, in order; acked: gone from the head.
	l := f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 2, TTL: ttl})
	require.True(f.t, sameBytes(want[:2], l.Values))
	require.True(f.t, sameBytes(want, valuesOf(f.storedValues(in, f.q, "k", 10))), "Values of a leased key")
	f.finish(l, store.Outcome{Kind: store.Retry})
	l = f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	require.True(f.t, sameBytes(want, valuesOf(f.storedValues(in, f.q, "k", 10))), "Values of a retried key")
	f.ack(l, true)
	left := f.storedValues(in, f.q, "k", 10)
	require.True(f.t, sameBytes(want[2:], valuesOf(left)), "Values after an Ack")
	sameTime(f, vs[2].Added, left[0].Added, "Added of a value is kept")
	sameTime(f, vs[2].Added, f.keyInfo(in, "k").Oldest, "Oldest after an Ack: when the new head was added")
}

// valuesOf returns the values of stored values.
func valuesOf(vs []store.StoredValue) [][]byte {
	out := make([][]byte, len(vs))
	for i, v := range vs {
		out[i] = v.Value
	}
	return out
}

// testInspectQueues: Queues lists, by name, the queues that hold values or
// dead letters, each with its Stats and with when the first value of its
// first ready key was added; a queue that holds neither is not listed.
func testInspectQueues(f *fixture) {
	in := f.inspector()
	_, dead := f.s.(store.DeadLetters)
	hour := time.Hour

	// The scenario's queue: a retrying key, a debouncing one, and two
	// ready ones: x's value is older than y's, but y became ready first,
	// so y is at the front of the ready order.
	f.add("r", "r1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Retry, After: hour})
	f.addP("z", store.AddParams{Wait: hour}, "z1")
	f.add("x", "x1")
	f.add("y", "y1")
	xl := f.claimOne(one())
	f.values(xl, "x", "x1")
	f.finish(xl, store.Outcome{Kind: store.Retry})
	onQueue := func(queue string, do func()) {
		q := f.q
		f.q = queue
		defer func() { f.q = q }()
		do()
	}
	onQueue(f.other("debouncing"), func() { f.addP("k", store.AddParams{Wait: hour}, "1") })
	onQueue(f.other("held:1"), func() {
		f.add("k", "1")
		f.finish(f.claimOne(one()), store.Outcome{Kind: store.Hold})
	})
	onQueue(f.other("leased"), func() {
		f.add("k", "1")
		f.claimOne(one())
	})
	onQueue(f.other("ready%"), func() { f.add("k", "1", "2") })
	onQueue(f.other("emptied"), func() {
		f.add("k", "1")
		f.ack(f.claimOne(one()), false)
	})
	if dead {
		onQueue(f.other("dead"), func() {
			f.add("k", "1")
			f.finish(f.claimOne(one()), store.Outcome{Kind: store.Drop, Err: "x"})
		})
	}

	qs, err := in.Queues(f.ctx)
	require.NoError(f.t, err)
	names := make([]string, len(qs))
	for i, q := range qs {
		names[i] = q.Name
	}
	require.True(f.t, slices.IsSorted(names), "Queues are ordered by name: %q", names)
	require.Len(f.t, slices.Compact(slices.Clone(names)), len(names), "Queues lists a queue once: %q", names)
	var ours []store.QueueInfo
	for _, q := range qs {
		if q.Name == f.q || strings.HasPrefix(q.Name, f.q+"/") {
			ours = append(ours, q)
		}
	}
	wantNames := []string{f.q, f.other("debouncing"), f.other("held:1"), f.other("leased"), f.other("ready%")}
	if dead {
		wantNames = append(wantNames, f.other("dead"))
	}
	slices.Sort(wantNames)
	var got []string
	for _, q := range ours {
		got = append(got, q.Name)
	}
	require.Equal(f.t, wantNames, got, "the scenario's queues that hold values or dead letters")

	for _, q := range ours {
		st, err := f.s.Stats(f.ctx, q.Name)
		require.NoError(f.t, err)
		require.Equal(f.t, st, q.Stats, "Stats of queue %q", q.Name)
		var front string
		switch q.Name {
		case f.q:
			front = "y"
		case f.other("ready%"):
			front = "k"
		}
		if front == "" {
			require.True(f.t, q.Oldest.IsZero(), "Oldest of queue %q, which has no ready key: %v", q.Name, q.Oldest)
			continue
		}
		vs := f.storedValues(in, q.Name, front, 1)
		require.Len(f.t, vs, 1)
		sameTime(f, vs[0].Added, q.Oldest, "Oldest of queue %q: when the first value of key %q, at the front of the ready order, was added", q.Name, front)
	}
}
