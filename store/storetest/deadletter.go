package storetest

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// deadLetters returns the engine's dead letters, or skips the scenario.
func (f *fixture) deadLetters() store.DeadLetters {
	f.t.Helper()
	dl, ok := f.s.(store.DeadLetters)
	if !ok {
		f.t.Skip("the engine keeps no dead letters")
	}
	return dl
}

// list returns up to limit dead letters after the ID after.
func (f *fixture) list(dl store.DeadLetters, queue string, after uint64, limit int) []store.DeadLetter {
	f.t.Helper()
	ds, err := dl.DeadLetters(f.ctx, queue, after, limit)
	require.NoError(f.t, err)
	require.LessOrEqual(f.t, len(ds), limit)
	return ds
}

// drop adds vals to key, leases them and drops them with why.
func (f *fixture) drop(key, why string, vals ...string) {
	f.t.Helper()
	f.add(key, vals...)
	l := f.claimOne(one())
	f.values(l, key, vals...)
	f.finish(l, store.Outcome{Kind: store.Drop, Err: why})
}

// testDeadLetterKept: a dropped batch is kept with its key, values, error,
// attempt and time, in its queue only, and the key goes on.
func testDeadLetterKept(f *fixture) {
	dl := f.deadLetters()
	f.add("k", "1", "2", "3")
	mb2 := store.ClaimParams{Keys: 1, MaxBatch: 2, TTL: ttl}
	l := f.claimOne(mb2)
	f.finish(l, store.Outcome{Kind: store.Retry})
	l = f.claimOne(mb2)
	b := time.Now()
	require.True(f.t, f.finish(l, store.Outcome{Kind: store.Drop, Err: "boom"}))
	a := time.Now()

	ds := f.list(dl, f.q, 0, 10)
	require.Len(f.t, ds, 1)
	d := ds[0]
	require.Positive(f.t, d.ID)
	require.Equal(f.t, "k", d.Key)
	require.Equal(f.t, []string{"1", "2"}, strs(d.Values))
	require.Equal(f.t, "boom", d.Err)
	require.Equal(f.t, 2, d.Attempt)
	require.WithinRange(f.t, d.At, b.Add(-f.late), a.Add(f.late))
	st := f.stats()
	require.Equal(f.t, 1, st.Dead)
	require.Equal(f.t, 1, st.Values)
	require.Empty(f.t, f.list(dl, f.other("b"), 0, 10), "dead letters of another queue")

	l = f.claimOne(one())
	f.values(l, "k", "3")
	require.Equal(f.t, 1, l.Attempt)
	f.ack(l, false)
}

// testDeadLetterPaging: dead letters list oldest first, by growing ID,
// limit at a time, after the last one seen.
func testDeadLetterPaging(f *fixture) {
	dl := f.deadLetters()
	for i := range 5 {
		f.drop(fmt.Sprint("k", i), fmt.Sprint("e", i), fmt.Sprint("v", i))
	}
	var keys []string
	var after uint64
	for page := 0; ; page++ {
		require.Less(f.t, page, 4)
		ds := f.list(dl, f.q, after, 2)
		if len(ds) == 0 {
			break
		}
		for _, d := range ds {
			require.Greater(f.t, d.ID, after)
			after = d.ID
			keys = append(keys, d.Key)
			require.Equal(f.t, "e"+d.Key[1:], d.Err)
		}
	}
	require.Equal(f.t, []string{"k0", "k1", "k2", "k3", "k4"}, keys)
	require.Len(f.t, f.list(dl, f.q, 0, 100), 5)
	require.Empty(f.t, f.list(dl, f.q, 0, 0))
}

// testDeadLetterRedrive: a redriven dead letter's values go to the tail of
// its key, ready at once, and the dead letter is gone.
func testDeadLetterRedrive(f *fixture) {
	dl := f.deadLetters()
	f.drop("k", "x", "d1", "d2")
	f.drop("k", "y", "d3")
	ds := f.list(dl, f.q, 0, 10)
	require.Len(f.t, ds, 2)

	f.add("k", "a")
	redrive := func(id uint64) bool {
		f.t.Helper()
		ok, err := dl.Redrive(f.ctx, f.q, id)
		require.NoError(f.t, err)
		return ok
	}
	require.True(f.t, redrive(ds[0].ID))
	require.False(f.t, redrive(ds[0].ID), "a dead letter is redriven once")
	require.False(f.t, redrive(ds[1].ID+1000), "no such dead letter")
	l := f.claimOne(one())
	f.values(l, "k", "a", "d1", "d2")
	require.Equal(f.t, 1, l.Attempt)

	require.True(f.t, redrive(ds[1].ID)) // behind the lease
	f.none()
	f.ack(l, true)
	f.values(f.claimOne(one()), "k", "d3")
	require.Empty(f.t, f.list(dl, f.q, 0, 10))
	require.Zero(f.t, f.stats().Dead)
}

// testDeadLetterPurge: Purge removes the dead letters dropped before a
// time, in its queue only.
func testDeadLetterPurge(f *fixture) {
	dl := f.deadLetters()
	f.drop("k", "x", "1")
	f.drop("j", "x", "2")
	n, err := dl.Purge(f.ctx, f.q, time.Now().Add(-time.Hour))
	require.NoError(f.t, err)
	require.Zero(f.t, n)
	n, err = dl.Purge(f.ctx, f.other("b"), time.Now().Add(time.Hour))
	require.NoError(f.t, err)
	require.Zero(f.t, n)
	require.Len(f.t, f.list(dl, f.q, 0, 10), 2)
	n, err = dl.Purge(f.ctx, f.q, time.Now().Add(time.Hour))
	require.NoError(f.t, err)
	require.Equal(f.t, 2, n)
	require.Empty(f.t, f.list(dl, f.q, 0, 10))
	require.Zero(f.t, f.stats().Dead)
}
