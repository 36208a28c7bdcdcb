package storetest

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testDebounceWait: values added within Wait of each other join one burst,
// which is not ready before Wait of quiet.
func testDebounceWait(f *fixture) {
	w := 4 * f.tick
	p := store.AddParams{Wait: w}
	b1 := time.Now()
	f.addP("k", p, "1")
	require.LessOrEqual(f.t, f.noneBefore(b1, w), w)
	b2 := time.Now()
	f.addP("k", p, "2")
	if since := time.Since(b1); since >= w {
		f.slow(since, w, "two Adds took longer than the quiet period")
	}
	l := f.await(one(), b2.Add(w))
	f.values(l, "k", "1", "2")
	f.ack(l, false)
}

// testDebounceQuietPeriodMoves: every Add moves the burst's deadline to Wait
// after it.
func testDebounceQuietPeriodMoves(f *fixture) {
	w := 4 * f.tick
	p := store.AddParams{Wait: w}
	var last time.Time
	var want []string
	for i := range 4 {
		b := time.Now()
		f.addP("k", p, fmt.Sprint(i))
		want = append(want, fmt.Sprint(i))
		if since := time.Since(last); i > 0 && since >= w {
			f.slow(since, w, "two Adds took longer than the quiet period")
		}
		last = b
		if ls, _ := f.claim(one()); len(ls) > 0 {
			require.False(f.t, time.Now().Before(b.Add(w)), "a burst was ready before Wait of quiet")
			f.slow(time.Since(b), w, "a Claim came after the quiet period that followed an Add")
		}
		f.pause(w / 2)
	}
	l := f.await(one(), last.Add(w))
	f.values(l, "k", want...)
	f.ack(l, false)
}

// testDebounceMaxWait: a burst that never goes quiet is ready MaxWait after
// its first value, with the values added until then.
func testDebounceMaxWait(f *fixture) {
	w, maxWait := 4*f.tick, 10*f.tick
	p := store.AddParams{Wait: w, MaxWait: maxWait}
	first := time.Now()
	last := first
	var added []string
	for i := 0; ; i++ {
		b := time.Now()
		f.addP("k", p, fmt.Sprint(i))
		added = append(added, fmt.Sprint(i))
		if since := time.Since(last); since >= w {
			f.slow(since, w, "two Adds took longer than the quiet period")
		}
		last = b
		ls, _ := f.claim(one())
		if len(ls) == 1 {
			require.False(f.t, time.Now().Before(first.Add(maxWait)), "a burst was ready before MaxWait")
			require.LessOrEqual(f.t, time.Since(first), maxWait+f.late)
			require.NotEmpty(f.t, ls[0].Values)
			require.Equal(f.t, added[:len(ls[0].Values)], strs(ls[0].Values))
			f.finish(ls[0], store.Outcome{Kind: store.Ack})
			return
		}
		require.Less(f.t, time.Since(first), maxWait+f.late, "a burst that never goes quiet was never ready")
		f.pause(f.tick)
	}
}

// testDebounceEndedByWaitZero: an Add with Wait 0 makes the open burst
// ready with it.
func testDebounceEndedByWaitZero(f *fixture) {
	f.addP("k", store.AddParams{Wait: time.Minute, MaxWait: time.Hour}, "1")
	f.none()
	require.Equal(f.t, 1, f.stats().Pending)
	f.add("k", "2")
	l := f.claimOne(one())
	f.values(l, "k", "1", "2")
	f.ack(l, false)
}

// testDebounceBehindReadyValues: a burst opened behind ready values waits
// for its own deadline; the ready values are leased without it.
func testDebounceBehindReadyValues(f *fixture) {
	f.add("k", "1")
	f.addP("k", store.AddParams{Wait: time.Minute}, "2")
	l := f.claimOne(one())
	f.values(l, "k", "1")
	f.ack(l, true)
	f.none()
	st := f.stats()
	require.Equal(f.t, 1, st.Pending)
	require.Zero(f.t, st.Ready)
	require.Equal(f.t, 1, st.Values)
}

// testAddedWhileLeasedRunAfter: values added while their key is leased wait
// behind the lease, and for their burst; then they run, at the tail.
func testAddedWhileLeasedRunAfter(f *fixture) {
	w := 3 * f.tick
	f.add("k", "1")
	l := f.claimOne(one())
	b := time.Now()
	f.addP("k", store.AddParams{Wait: w}, "2")
	f.none()
	f.ack(l, true)
	l = f.await(one(), b.Add(w))
	f.values(l, "k", "2")
	require.Equal(f.t, 1, l.Attempt)

	f.add("k", "3")
	f.none()
	f.ack(l, true)
	l = f.claimOne(one())
	f.values(l, "k", "3")

	f.addP("k", store.AddParams{Wait: f.tick}, "4")
	f.add("o", "o1")
	f.pause(2 * f.tick) // the burst comes due while k is leased
	f.ack(l, true)
	ls, _ := f.claim(store.ClaimParams{Keys: 2, TTL: ttl})
	require.Equal(f.t, []string{"o", "k"}, keysOf(ls), "k is ready when its lease ends, behind o")
	f.values(ls[1], "k", "4")
	for _, l := range ls {
		f.ack(l, false)
	}
}
