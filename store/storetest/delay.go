package storetest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// delay returns the AddParams of values due d after the Add.
func delay(d time.Duration) store.AddParams { return store.AddParams{Delay: d} }

// before ends the try as too slow (see fixture.slow) when b+d, a
// deadline set by a call made after b, passed: what was done since, which
// must come before it, proves nothing.
func (f *fixture) before(b time.Time, d time.Duration, what string) {
	f.t.Helper()
	if since := time.Since(b); since >= d {
		f.slow(since, d, what+" came after the deadline it had to come before")
	}
}

// testDelayNotBefore: a value added with a Delay is not leased before the
// delay passed, nor are the values added behind it, ready or in a burst,
// and all are leased once it did; Claim's next counts down to it, and a
// delay of Never never comes due.
func testDelayNotBefore(f *fixture) {
	d := 4 * f.tick
	b := time.Now()
	f.addP("k", delay(d), "1", "2")
	f.add("k", "3")
	f.addP("k", store.AddParams{Wait: f.tick}, "4")
	next := f.noneBefore(b, d)
	require.LessOrEqual(f.t, next, d, "Claim's next with a delayed value")
	l := f.await(one(), b.Add(d))
	f.values(l, "k", "1", "2", "3", "4")
	f.ack(l, false)

	// Claim's next is the delay's, at the precision of the other
	// deadlines (see testClaimNext).
	b = time.Now()
	f.addP("later", delay(40*time.Second), "x")
	f.within(f.none(), 40*time.Second-time.Since(b), 40*time.Second, "a delayed value")

	never := f.other("never")
	require.NoError(f.t, f.s.Add(f.ctx, never, "k", bytesOf([]string{"1"}), delay(store.Never)))
	ls, next, err := f.s.Claim(f.ctx, never, one())
	require.NoError(f.t, err)
	require.Empty(f.t, ls)
	require.Equal(f.t, store.Never, next, "a delay of Never never comes due")
}

// testDelayOrderKept: a delayed value holds back the values of its key
// added after it, ready or not; a lease takes the due values from the head
// and stops at the first that is not due, whatever MaxBatch allows; a value
// due sooner behind one due later waits for it; other keys go on.
func testDelayOrderKept(f *fixture) {
	d := 4 * f.tick
	b := time.Now()
	f.add("k", "r1", "r2")
	f.addP("k", delay(d), "d1")
	f.add("k", "r3")
	f.addP("late", delay(2*d), "l1")
	f.addP("late", delay(d), "l2")
	f.add("other", "o1")

	ls, _ := f.claim(store.ClaimParams{Keys: 3, TTL: ttl})
	f.before(b, d, "the first Claim")
	require.ElementsMatch(f.t, []string{"k", "other"}, keysOf(ls), "the keys with a due first value")
	for _, l := range ls {
		if l.Key == "k" {
			f.values(l, "k", "r1", "r2")
			f.ack(l, true)
		} else {
			f.values(l, "other", "o1")
			f.ack(l, false)
		}
	}
	f.noneBefore(b, d)

	l := f.await(store.ClaimParams{Keys: 1, MaxBatch: 5, TTL: ttl}, b.Add(d))
	f.values(l, "k", "d1", "r3")
	f.ack(l, false)
	f.before(b, 2*d, "the first delay's batch")
	f.noneBefore(b, 2*d)
	l = f.await(one(), b.Add(2*d))
	f.values(l, "late", "l1", "l2")
	f.ack(l, false)
}

// testDelayBatchStops: a batch leased before a delayed value of its key is
// due stops before it, and the key is ready again, behind the keys
// waiting, once the batch ended and the value is due: at once when it came
// due during the lease, when it comes due otherwise. A retried batch keeps
// its values and never takes the delayed one.
func testDelayBatchStops(f *fixture) {
	d := 4 * f.tick
	b := time.Now()
	f.add("k", "1")
	f.addP("k", delay(d), "2")
	added := time.Now()
	l := f.claimOne(one())
	f.before(b, d, "the first Claim")
	f.values(l, "k", "1")
	f.finish(l, store.Outcome{Kind: store.Retry, After: 0})
	l = f.claimOne(one())
	f.values(l, "k", "1")
	f.before(b, d, "the second Claim")
	require.Equal(f.t, 2, l.Attempt)
	f.pauseUntil(added.Add(d + f.tick)) // past the value's time: its Add returned before added
	f.add("w", "w1")                    // waiting when k's batch ends
	f.ack(l, true)
	ls, _ := f.claim(store.ClaimParams{Keys: 2, TTL: ttl})
	require.Equal(f.t, []string{"w", "k"}, keysOf(ls), "k, due during its lease, goes behind the keys waiting")
	f.values(ls[1], "k", "2")
	require.Equal(f.t, 1, ls[1].Attempt)
	f.ack(ls[0], false)
	f.ack(ls[1], false)
}

// testDelayEndsBurst: a delayed Add ends the key's open burst, whose
// values are ready at once, ahead of the delayed ones; an Add with both a
// Wait and a Delay, or a negative Delay, is refused and stores nothing.
func testDelayEndsBurst(f *fixture) {
	err := f.s.Add(f.ctx, f.q, "k", bytesOf([]string{"x"}), store.AddParams{Wait: time.Second, Delay: time.Second})
	require.ErrorContains(f.t, err, "Delay")
	require.ErrorContains(f.t, err, "Wait")
	require.ErrorContains(f.t, f.s.Add(f.ctx, f.q, "k", bytesOf([]string{"x"}), delay(-time.Second)), "Delay")
	require.Zero(f.t, f.stats().Values, "a refused Add stored values")

	d := 4 * f.tick
	f.addP("k", store.AddParams{Wait: time.Minute}, "b1")
	b := time.Now()
	f.addP("k", delay(d), "d1")
	l := f.claimOne(one())
	f.before(b, d, "the Claim")
	f.values(l, "k", "b1")
	f.ack(l, true)
	f.noneBefore(b, d)
	l = f.await(one(), b.Add(d))
	f.values(l, "k", "d1")
	f.ack(l, false)
}

// testDelayInspect: a key whose first value waits for its time is
// Scheduled until exactly that time (its Add's time plus the delay), counts
// in Stats' Values and Keys but in none of Ready, Pending, Leased,
// Retrying and Held, and is found by a filter on its state; once due it is
// Ready since that instant. A key whose head is ready shows Ready with
// delayed values behind it.
func testDelayInspect(f *fixture) {
	in := f.inspector()
	d := 3 * f.tick
	b := time.Now()
	f.addP("k", delay(d), "1", "2")
	f.add("r", "r1")
	f.addP("r", delay(time.Minute), "r2")
	info, r, s := f.keyInfo(in, "k"), f.keyInfo(in, "r"), f.stats()
	scheduled := f.walk(in, f.q, store.KeyQuery{State: store.Scheduled}, 10, nil)
	f.before(b, d, "reading the keys")
	f.sameBut(store.KeyInfo{Key: "k", State: store.Scheduled, Until: b, Values: 2}, info, "a scheduled key")
	sameTime(f, f.storedValues(in, f.q, "k", 1)[0].Added.Add(d), info.Until, "Until of a scheduled key: its value's Add plus the delay")
	f.sameBut(store.KeyInfo{Key: "r", State: store.Ready, Since: b, Values: 2}, r, "a ready key with a delayed value")
	require.Equal(f.t, store.Stats{Values: 4, Keys: 2, Ready: 1}, s, "Stats with a scheduled key")
	require.Len(f.t, scheduled, 1, "the scheduled keys")
	require.Equal(f.t, "k", scheduled[0].Key)

	ready := f.awaitState(in, "k", store.Ready, b.Add(d))
	sameTime(f, info.Until, ready.Since, "a scheduled key is ready since its value's time")
	f.sameBut(store.KeyInfo{Key: "k", State: store.Ready, Since: b, Values: 2}, ready, "a scheduled key that came due")
}

// testDelayWaitWakes: a delayed Add wakes a Wait that expects nothing
// sooner, and a worker that waits for Claim's next leases the value when
// it comes due.
func testDelayWaitWakes(f *fixture) {
	f.addP("slow", store.AddParams{Wait: time.Minute}, "s1")
	f.none()
	d := 4 * f.tick
	var b time.Time
	f.wakes(func() {
		b = time.Now()
		f.addP("k", delay(d), "1")
	})
	l := f.await(one(), b.Add(d))
	f.values(l, "k", "1")
	f.ack(l, false)
}

// testDelayMaxValues: delayed values count towards MaxValues from their
// Add, as every stored value does.
func testDelayMaxValues(f *fixture) {
	p := store.AddParams{Delay: time.Minute, MaxValues: 3}
	require.NoError(f.t, f.s.Add(f.ctx, f.q, "k", bytesOf([]string{"1", "2"}), p))
	require.NoError(f.t, f.s.Add(f.ctx, f.q, "j", bytesOf([]string{"3"}), p))
	require.ErrorIs(f.t, f.s.Add(f.ctx, f.q, "k", bytesOf([]string{"4"}), p), store.ErrFull)
	f.full(f.s, "other", 3, "5")
	require.Equal(f.t, 3, f.stats().Values)
}
