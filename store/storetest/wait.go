package storetest

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// within checks that d lies in [lo, hi].
func (f *fixture) within(d, lo, hi time.Duration, what string) {
	f.t.Helper()
	require.LessOrEqual(f.t, d, hi, what)
	require.GreaterOrEqual(f.t, d, lo, what)
}

// testClaimNext: Claim's next is the time until the earliest of the
// queue's deadlines (a burst, a retry delay, a lease's TTL), 0 while a key
// is ready, and Never when nothing is scheduled.
func testClaimNext(f *fixture) {
	_, next := f.claim(one())
	require.Equal(f.t, store.Never, next, "empty queue")

	b := time.Now()
	f.addP("a", store.AddParams{Wait: time.Minute}, "a1")
	f.within(f.none(), time.Minute-time.Since(b), time.Minute, "a burst")

	f.add("r", "r1")
	l := f.claimOne(one())
	b = time.Now()
	f.finish(l, store.Outcome{Kind: store.Retry, After: 40 * time.Second})
	f.within(f.none(), 40*time.Second-time.Since(b), 40*time.Second, "a retry delay")

	f.add("l", "l1")
	b = time.Now()
	l = f.claimOne(store.ClaimParams{Keys: 1, TTL: 20 * time.Second})
	f.within(f.none(), 20*time.Second-time.Since(b), 20*time.Second, "a lease's TTL")
	f.finish(l, store.Outcome{Kind: store.Hold})
	f.within(f.none(), 20*time.Second, 40*time.Second, "a held key is not scheduled")

	f.add("c", "c1")
	f.add("d", "d1")
	ls, next := f.claim(one())
	require.Equal(f.t, []string{"c"}, keysOf(ls))
	require.Zero(f.t, next, "d is ready")

	never := f.other("never")
	require.NoError(f.t, f.s.Add(f.ctx, never, "k", bytesOf([]string{"1"}), store.AddParams{}))
	ls, _, err := f.s.Claim(f.ctx, never, one())
	require.NoError(f.t, err)
	require.Len(f.t, ls, 1)
	f.finish(ls[0], store.Outcome{Kind: store.Retry, After: store.Never})
	ls, next, err = f.s.Claim(f.ctx, never, one())
	require.NoError(f.t, err)
	require.Empty(f.t, ls)
	require.Equal(f.t, store.Never, next, "a retry delay of Never never comes due")
}

// wakes starts a long Wait, lets it block, makes change, and checks that
// the Wait returns promptly.
func (f *fixture) wakes(change func()) {
	f.t.Helper()
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.s.Wait(ctx, f.q, time.Minute) }()
	f.pause(f.tick)
	b := time.Now()
	change()
	select {
	case err := <-done:
		require.NoError(f.t, err)
	case <-time.After(f.late):
		cancel()
		<-done
		require.Fail(f.t, "Wait slept through a change", "still waiting %v after it", time.Since(b))
	}
}

// testWaitWakesOnAdd: an Add from another goroutine ends a Wait.
func testWaitWakesOnAdd(f *fixture) {
	f.wakes(func() { f.add("k", "1") })
	f.ack(f.claimOne(one()), false)
}

// testWaitWakesOnFinish: a Finish that leaves a key ready ends a Wait.
func testWaitWakesOnFinish(f *fixture) {
	f.add("k", "1", "2")
	l := f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	f.wakes(func() { f.ack(l, true) })
	f.ack(f.claimOne(one()), false)
}

// testWaitWakesOnRelease: a Release ends a Wait.
func testWaitWakesOnRelease(f *fixture) {
	f.add("k", "1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Hold})
	f.wakes(func() {
		ok, err := f.s.Release(f.ctx, f.q, "k")
		require.NoError(f.t, err)
		require.True(f.t, ok)
	})
	f.ack(f.claimOne(one()), false)
}

// testWaitWakesOnRedrive: a Redrive ends a Wait.
func testWaitWakesOnRedrive(f *fixture) {
	dl := f.deadLetters()
	f.add("k", "1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Drop, Err: "x"})
	ds, err := dl.DeadLetters(f.ctx, f.q, 0, 1)
	require.NoError(f.t, err)
	require.Len(f.t, ds, 1)
	f.wakes(func() {
		ok, err := dl.Redrive(f.ctx, f.q, ds[0].ID)
		require.NoError(f.t, err)
		require.True(f.t, ok)
	})
	f.ack(f.claimOne(one()), false)
}

// testWaitTimesOut: with nothing happening, Wait returns nil after d (or
// earlier: wake-ups may be spurious); with d <= 0, at once.
func testWaitTimesOut(f *fixture) {
	d := 3 * f.tick
	b := time.Now()
	require.NoError(f.t, f.s.Wait(f.ctx, f.q, d))
	require.Less(f.t, time.Since(b), d+f.late)
	b = time.Now()
	require.NoError(f.t, f.s.Wait(f.ctx, f.q, 0))
	require.NoError(f.t, f.s.Wait(f.ctx, f.q, -time.Second))
	require.Less(f.t, time.Since(b), f.late)
}

// testWaitEndsWithCtx: Wait returns ctx.Err() once ctx ends, and at once
// for a ctx that ended already.
func testWaitEndsWithCtx(f *fixture) {
	d := 2 * f.tick
	ctx, cancel := context.WithTimeout(f.ctx, d)
	defer cancel()
	b := time.Now()
	var err error
	for err == nil {
		require.Less(f.t, time.Since(b), d+f.late, "Wait outlived its ctx")
		err = f.s.Wait(ctx, f.q, time.Minute)
	}
	require.ErrorIs(f.t, err, context.DeadlineExceeded)
	require.Less(f.t, time.Since(b), d+f.late)

	done, cancel := context.WithCancel(f.ctx)
	cancel()
	require.ErrorIs(f.t, f.s.Wait(done, f.q, time.Minute), context.Canceled)
}

// testWaitHearsChangeBeforeIt: a change made between a Claim that found
// nothing and the Wait that follows it is not lost.
func testWaitHearsChangeBeforeIt(f *fixture) {
	_, next := f.claim(one())
	require.Equal(f.t, store.Never, next)
	f.add("k", "1")
	ctx, cancel := context.WithTimeout(f.ctx, f.late)
	defer cancel()
	require.NoError(f.t, f.s.Wait(ctx, f.q, next), "Wait missed an Add made before it")
	l := f.claimOne(one())
	f.values(l, "k", "1")

	next = f.none() // k's lease
	d := 2 * f.tick
	b := time.Now()
	f.addP("j", store.AddParams{Wait: d}, "1")
	ctx, cancel = context.WithTimeout(f.ctx, d+f.late)
	defer cancel()
	require.NoError(f.t, f.s.Wait(ctx, f.q, next), "Wait missed a burst opened before it")
	f.values(f.await(one(), b.Add(d)), "j", "1")
}
