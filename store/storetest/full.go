package storetest

import (
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// addMax adds vals to key, ready at once, with AddParams.MaxValues max,
// through s, and returns Add's error.
func (f *fixture) addMax(s store.Store, key string, max int, vals ...string) error {
	f.t.Helper()
	return s.Add(f.ctx, f.q, key, bytesOf(vals), store.AddParams{MaxValues: max})
}

// full checks that an Add of vals to key with MaxValues max, through s, is
// refused with ErrFull and stores nothing.
func (f *fixture) full(s store.Store, key string, max int, vals ...string) {
	f.t.Helper()
	before := f.stats().Values
	require.ErrorIs(f.t, f.addMax(s, key, max, vals...), store.ErrFull,
		"Add of %d values with MaxValues %d to a queue of %d", len(vals), max, before)
	require.Equal(f.t, before, f.stats().Values, "a refused Add stored values")
}

// testMaxValues: an Add with MaxValues stores its values only while the
// queue then holds at most that many, all of them or none; every stored
// value counts, in whatever state, until an Ack or a Drop removes it; a
// second Store value on the same state (another process) shares the count.
func testMaxValues(f *fixture) {
	twin := f.twin
	require.Error(f.t, f.addMax(f.s, "k", -1, "x"), "a negative MaxValues")

	// Values of any state count: ready, debouncing, leased, retrying, held.
	require.NoError(f.t, f.addMax(f.s, "ready", 7, "r1", "r2"))
	require.NoError(f.t, f.s.Add(f.ctx, f.q, "burst", bytesOf([]string{"b1"}), store.AddParams{Wait: time.Minute, MaxValues: 7}))
	f.add("leased", "l1") // an Add without a bound counts as well
	l := f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	f.values(l, "ready", "r1")
	f.add("retry", "t1")
	require.NoError(f.t, f.addMax(twin, "held", 7, "h1", "h2"))
	ls, _ := f.claim(store.ClaimParams{Keys: 3, TTL: ttl}) // leased, retry, held
	require.Equal(f.t, []string{"leased", "retry", "held"}, keysOf(ls))
	f.finish(ls[1], store.Outcome{Kind: store.Retry, After: time.Minute})
	f.finish(ls[2], store.Outcome{Kind: store.Hold})
	require.Equal(f.t, 7, f.stats().Values)

	// Full at 7, through either Store value; all or nothing below it.
	f.full(f.s, "ready", 7, "r3")
	f.full(twin, "new", 7, "n1")
	f.full(f.s, "new", 8, "n1", "n2")
	require.NoError(f.t, f.addMax(twin, "new", 8, "n1"), "another bound, the same count")
	f.full(f.s, "new", 3, "n2")
	f.full(f.s, "huge", 100, make([]string, 101)...)

	// An Ack frees its batch's room, through the other Store value too.
	f.ack(l, true)
	require.NoError(f.t, f.addMax(f.s, "new", 8, "n2"))
	f.full(twin, "new", 8, "n3")
	// A Drop too: a dead letter does not count; its Redrive is not bounded.
	f.finish(ls[0], store.Outcome{Kind: store.Drop, Err: "x"})
	require.Equal(f.t, 7, f.stats().Values)
	require.NoError(f.t, f.addMax(twin, "new", 8, "n3"))
	f.full(f.s, "new", 8, "n4")
	if dl, ok := f.s.(store.DeadLetters); ok {
		ds := f.list(dl, f.q, 0, 1)
		require.Len(f.t, ds, 1)
		ok, err := dl.Redrive(f.ctx, f.q, ds[0].ID)
		require.NoError(f.t, err)
		require.True(f.t, ok)
		require.Equal(f.t, 9, f.stats().Values, "a Redrive past the bound")
		f.full(f.s, "new", 9, "n4")
	}

	// Another queue has a count of its own.
	require.NoError(f.t, f.s.Add(f.ctx, f.other("b"), "k", bytesOf([]string{"1"}), store.AddParams{MaxValues: 1}))
	require.ErrorIs(f.t, twin.Add(f.ctx, f.other("b"), "k", bytesOf([]string{"2"}), store.AddParams{MaxValues: 1}), store.ErrFull)
}

// testMaxValuesConcurrent: Adds racing from two Store values on one queue
// never take it past their bound together, and fill it exactly.
func testMaxValuesConcurrent(f *fixture) {
	const bound, adders, each = 20, 8, 6
	var wg sync.WaitGroup
	var mu sync.Mutex
	stored := 0
	for a := range adders {
		s := f.s
		if a%2 == 1 {
			s = f.twin
		}
		wg.Go(func() {
			for i := range each {
				err := s.Add(f.ctx, f.q, fmt.Sprint(i%3), [][]byte{[]byte(fmt.Sprint(a, i))}, store.AddParams{MaxValues: bound})
				if err != nil {
					require.ErrorIs(f.t, err, store.ErrFull)
					continue
				}
				mu.Lock()
				stored++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Equal(f.t, bound, stored, "Adds accepted")
	require.Equal(f.t, bound, f.stats().Values, "values stored")
}
