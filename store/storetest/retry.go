package storetest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testRetry: a retried batch is not ready before its delay, then comes back
// exactly as it was, whatever MaxBatch says, at the next Attempt; values
// added meanwhile form the next batch, at Attempt 1.
func testRetry(f *fixture) {
	delay := 3 * f.tick
	f.add("k", "1", "2")
	l := f.claimOne(one())
	require.Equal(f.t, 1, l.Attempt)
	f.add("k", "3")
	before := time.Now()
	require.True(f.t, f.finish(l, store.Outcome{Kind: store.Retry, After: delay}))
	next := f.noneBefore(before, delay)
	require.LessOrEqual(f.t, next, delay)
	st := f.stats()
	if since := time.Since(before); since >= delay {
		f.slow(since, delay, "the retry delay passed before Stats that must count the key retrying")
	}
	require.Equal(f.t, 1, st.Retrying)
	require.Equal(f.t, 1, st.Behind)

	l2 := f.await(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl}, before.Add(delay))
	f.values(l2, "k", "1", "2")
	require.Equal(f.t, 2, l2.Attempt)
	require.Greater(f.t, l2.Fence, l.Fence)
	f.ack(l2, true)
	l3 := f.claimOne(one())
	f.values(l3, "k", "3")
	require.Equal(f.t, 1, l3.Attempt)
	f.ack(l3, false)
}

// testRetryWithoutDelay: a Retry after 0 is ready at once, and attempts
// keep counting.
func testRetryWithoutDelay(f *fixture) {
	f.add("k", "1")
	for attempt := 1; attempt <= 3; attempt++ {
		l := f.claimOne(one())
		f.values(l, "k", "1")
		require.Equal(f.t, attempt, l.Attempt)
		f.finish(l, store.Outcome{Kind: store.Retry})
	}
	l := f.claimOne(one())
	require.Equal(f.t, 4, l.Attempt)
	f.ack(l, false)
}

// testDefer: a deferred batch waits for its delay like a retried one, but
// counts no attempt and no retry.
func testDefer(f *fixture) {
	delay := 3 * f.tick
	f.add("k", "1")
	l := f.claimOne(one())
	f.finish(l, store.Outcome{Kind: store.Retry})
	l = f.claimOne(one())
	require.Equal(f.t, 2, l.Attempt)
	f.finish(l, store.Outcome{Kind: store.Defer})
	l = f.claimOne(one())
	require.Equal(f.t, 2, l.Attempt, "Defer counts no attempt")

	f.add("k", "2")
	before := time.Now()
	f.finish(l, store.Outcome{Kind: store.Defer, After: delay})
	require.LessOrEqual(f.t, f.noneBefore(before, delay), delay)
	st := f.stats()
	if since := time.Since(before); since >= delay {
		f.slow(since, delay, "the delay passed before Stats that must count the key waiting")
	}
	require.Zero(f.t, st.Retrying, "a deferred key is not retrying")
	require.Zero(f.t, st.Ready)
	require.Equal(f.t, 2, st.Values)
	l = f.await(store.ClaimParams{Keys: 1, TTL: ttl}, before.Add(delay))
	f.values(l, "k", "1")
	require.Equal(f.t, 2, l.Attempt)
	f.ack(l, true)
	l = f.claimOne(one())
	f.values(l, "k", "2")
	require.Equal(f.t, 1, l.Attempt)
	f.ack(l, false)
}

// testHoldRelease: a held key is out of the ready order, with what comes
// behind it, until Release, which starts its attempts over; Release of a
// key that is not held reports false.
func testHoldRelease(f *fixture) {
	f.add("k", "1", "2")
	mb1 := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl}
	l := f.claimOne(mb1)
	f.values(l, "k", "1")
	f.finish(l, store.Outcome{Kind: store.Retry})
	l = f.claimOne(mb1)
	require.Equal(f.t, 2, l.Attempt)
	require.True(f.t, f.finish(l, store.Outcome{Kind: store.Hold}))
	f.add("k", "3")
	require.Equal(f.t, store.Never, f.none(), "a held key is not scheduled")
	st := f.stats()
	require.Equal(f.t, 1, st.Held)
	require.Equal(f.t, 3, st.HeldValues)
	require.Zero(f.t, st.Ready)

	release := func(key string) bool {
		f.t.Helper()
		ok, err := f.s.Release(f.ctx, f.q, key)
		require.NoError(f.t, err)
		return ok
	}
	require.False(f.t, release("absent"))
	require.True(f.t, release("k"))
	require.False(f.t, release("k"), "a released key is no longer held")
	l = f.claimOne(one())
	f.values(l, "k", "1", "2", "3")
	require.Equal(f.t, 1, l.Attempt, "Release starts the attempts over")
	require.False(f.t, release("k"), "a leased key is not held")
	f.ack(l, false)
	require.Zero(f.t, f.stats().Held)
}

// testFinishMore: Finish's more says whether the key has values left,
// ready or in an open burst.
func testFinishMore(f *fixture) {
	f.add("k", "1")
	f.ack(f.claimOne(one()), false)

	f.add("k", "1")
	l := f.claimOne(one())
	f.add("k", "2")
	f.ack(l, true)
	l = f.claimOne(one())
	f.addP("k", store.AddParams{Wait: time.Minute}, "3")
	f.ack(l, true)
	require.Equal(f.t, 1, f.stats().Pending)

	f.add("d", "1")
	l = f.claimOne(one())
	more, err := f.s.Finish(f.ctx, l, store.Outcome{Kind: store.Drop, Err: "x"})
	require.NoError(f.t, err)
	require.False(f.t, more)

	for _, k := range []store.OutcomeKind{store.Retry, store.Defer, store.Hold} {
		f.add(kindName(k), "1")
		l := f.claimOne(one())
		require.True(f.t, f.finish(l, store.Outcome{Kind: k, After: time.Minute}), "more after %s", kindName(k))
	}
}
