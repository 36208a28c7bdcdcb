package storetest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testOperatePauseKey: a paused key is not leased, with the values it held
// and those added meanwhile, while the other keys are; its lease out runs
// on, and its Finish leaves the key waiting. A key without values is
// paused too, and its values then wait. Resumed, a key ready by then goes
// behind the keys ready now, with its values in order. Pause and resume
// report what the key was doing; Stats and Key show the pauses.
func testOperatePauseKey(f *fixture) {
	op := f.operator()
	in, _ := f.s.(store.Inspector)
	mb1 := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl}
	f.add("p", "p1", "p2")
	f.add("o", "o1")
	lp := f.claimOne(mb1)
	f.values(lp, "p", "p1")

	f.resumeKey(op, "p", false)
	f.pauseKey(op, "p", true)
	f.pauseKey(op, "p", false)
	f.add("p", "p3")
	lo := f.claimOne(store.ClaimParams{Keys: 3, TTL: ttl})
	f.values(lo, "o", "o1")
	f.none()
	require.Equal(f.t, store.Stats{Values: 4, Keys: 2, Leased: 2, PausedKeys: 1}, f.stats(),
		"a paused key out on a lease counts as leased")

	// Its lease runs on, and ends as usual; the key waits.
	require.NoError(f.t, f.s.Extend(f.ctx, lp, ttl), "Extend of a lease out when its key was paused")
	f.ack(lp, true)
	f.ack(lo, false)
	f.none()
	require.Equal(f.t, store.Stats{Values: 2, Keys: 1, PausedKeys: 1}, f.stats(),
		"a paused key is not ready")
	if in != nil {
		f.expectKey(in, "p", store.KeyInfo{State: store.Ready, Since: time.Now(), Attempt: 0, Fence: lp.Fence, Values: 2, Paused: true})
	}

	// A key without values.
	f.pauseKey(op, "e", true)
	f.pauseKey(op, "e", false)
	require.Equal(f.t, store.Stats{Values: 2, Keys: 1, PausedKeys: 2}, f.stats(),
		"PausedKeys counts a paused key without values")
	if in != nil {
		info, ok, err := in.Key(f.ctx, f.q, "e")
		require.NoError(f.t, err)
		require.True(f.t, ok, "Key of a paused key without values")
		require.Equal(f.t, store.KeyInfo{Key: "e", Paused: true}, info, "a paused key without values")
		require.Empty(f.t, f.storedValues(in, f.q, "e", 10))
		page, err := in.Keys(f.ctx, f.q, store.KeyQuery{})
		require.NoError(f.t, err)
		require.Equal(f.t, []string{"p"}, keysIn(f.once(page.Keys)), "a page shows the keys with values")
	}
	f.add("e", "e1")
	f.none()

	// Resumed: behind x, which came ready after p.
	f.add("x", "x1")
	f.resumeKey(op, "p", true)
	f.resumeKey(op, "p", false)
	f.resumeKey(op, "never", false)
	require.Equal(f.t, store.Stats{Values: 4, Keys: 3, Ready: 2, PausedKeys: 1}, f.stats())
	ls := f.claimAll(3, "x", "p")
	f.values(ls[1], "p", "p2", "p3")
	require.Equal(f.t, 1, ls[1].Attempt)
	require.Greater(f.t, ls[1].Fence, lp.Fence)
	f.resumeKey(op, "e", true)
	le := f.claimOne(one())
	f.values(le, "e", "e1")
	for _, l := range append(ls, le) {
		f.ack(l, false)
	}
	require.Equal(f.t, store.Stats{}, f.stats(), "no pause is left")
	if in != nil {
		f.noKey(in, f.q, "e")
	}
}

// testOperatePauseKeyClocksRun: a paused key's retry delay, burst and
// lease TTL run on while it is paused; a lease that lapsed meanwhile is
// not leased again until it is resumed. Resumed after its delay passed, a
// key is ready at once, at the tail of the ready order, in the order of
// the resumes.
func testOperatePauseKeyClocksRun(f *fixture) {
	op := f.operator()
	delay := 2 * f.tick
	f.add("r", "r1")
	f.add("l", "l1")
	lr := f.claimOne(one())
	ll := f.claimOne(store.ClaimParams{Keys: 1, TTL: delay})
	f.finish(lr, store.Outcome{Kind: store.Retry, After: delay})
	f.addP("d", store.AddParams{Wait: delay}, "d1")
	a := time.Now() // after every deadline was set
	for _, k := range []string{"r", "l", "d"} {
		f.pauseKey(op, k, true)
	}
	f.add("x", "x1")
	f.pauseUntil(a.Add(delay + f.tick/2))
	f.ack(f.claimOne(store.ClaimParams{Keys: 3, TTL: ttl}), false) // x
	f.lost(ll, store.Outcome{Kind: store.Ack})
	require.Equal(f.t, store.Never, f.none(), "nothing is scheduled but paused keys")
	f.add("y", "y1")
	for _, k := range []string{"d", "l", "r"} {
		f.resumeKey(op, k, true)
	}
	ls := f.claimAll(5, "y", "d", "l", "r")
	f.values(ls[1], "d", "d1")
	require.Equal(f.t, 2, ls[2].Attempt, "l's lease lapsed")
	require.Greater(f.t, ls[2].Fence, ll.Fence)
	require.Equal(f.t, 2, ls[3].Attempt, "r's retry")
	for _, l := range ls {
		f.ack(l, false)
	}
}

// testOperateResumeKeyWakes: a worker that waits, in another process than
// the operator's, is woken by ResumeKey of a key with ready values.
func testOperateResumeKeyWakes(f *fixture) {
	op := f.operator()
	f.pauseKey(op, "k", true)
	leases, errs := f.worker(f.s)
	f.pause(f.tick)
	f.add("k", "1")
	f.idleFor(leases, errs, 2*f.tick, "the key is paused")
	f.resumeKey(op, "k", true)
	f.ack(f.woken(leases, errs, "k", "ResumeKey"), false)
}

// testOperateRetryNow: RetryNow makes a retrying or deferred key ready at
// once, behind the keys ready now, with its batch and Attempt as they
// are; any other key it leaves as it is, and says so.
func testOperateRetryNow(f *fixture) {
	op := f.operator()
	hour := time.Hour
	mb1 := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl}
	f.add("r", "r1", "r2")
	lr := f.claimOne(mb1)
	f.add("r", "r3")
	f.finish(lr, store.Outcome{Kind: store.Retry, After: hour, Err: "boom"})
	f.add("d", "d1")
	ld := f.claimOne(one())
	f.finish(ld, store.Outcome{Kind: store.Defer, After: hour})
	f.add("x", "x1")
	f.retryNow(op, "r", true)
	f.retryNow(op, "d", true)
	ls := f.claimAll(4, "x", "r", "d")
	f.values(ls[1], "r", "r1")
	require.Equal(f.t, 2, ls[1].Attempt, "a retried batch's next attempt")
	f.values(ls[2], "d", "d1")
	require.Equal(f.t, 1, ls[2].Attempt, "a deferred batch's attempt")
	for _, l := range ls {
		f.ack(l, l.Key == "r")
	}
	lr = f.claimOne(one())
	f.values(lr, "r", "r2", "r3")
	require.Equal(f.t, 1, lr.Attempt)

	// Any other key is left as it is.
	f.retryNow(op, "r", false) // leased
	f.add("h", "h1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Hold})
	f.retryNow(op, "h", false)
	f.addP("b", store.AddParams{Wait: hour}, "b1")
	f.retryNow(op, "b", false)
	f.retryNow(op, "absent", false)
	f.add("y", "y1")
	f.add("z", "z1")
	f.retryNow(op, "y", false)
	f.finish(lr, store.Outcome{Kind: store.Retry}) // ready at once
	f.retryNow(op, "r", false)
	ls = f.claimAll(4, "y", "z", "r")
	require.Equal(f.t, 2, ls[2].Attempt)
	for _, l := range ls {
		f.ack(l, false)
	}
	f.none()
	require.Equal(f.t, store.Stats{Values: 2, Keys: 2, Pending: 1, Held: 1, HeldValues: 1}, f.stats())
}

// testOperateRetryNowWakes: a worker that waits, in another process than
// the operator's, is woken by RetryNow.
func testOperateRetryNowWakes(f *fixture) {
	op := f.operator()
	f.add("k", "1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Defer, After: time.Hour})
	leases, errs := f.worker(f.s)
	f.idleFor(leases, errs, 2*f.tick, "the key is deferred for an hour")
	f.retryNow(op, "k", true)
	f.ack(f.woken(leases, errs, "k", "RetryNow"), false)
}
