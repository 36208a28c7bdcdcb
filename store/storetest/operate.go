package storetest

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// operator returns the Operator the operation scenarios steer through, or
// skips the scenario when the engine has none. It is the twin's when the
// twin implements it: an operator steers from a process of their own, and
// what they do must reach the process that claims.
func (f *fixture) operator() store.Operator {
	f.t.Helper()
	if _, ok := f.s.(store.Operator); !ok {
		f.t.Skip("the engine does not implement store.Operator")
	}
	if op, ok := f.twin.(store.Operator); ok {
		return op
	}
	return f.s.(store.Operator)
}

// pauseQueue pauses queue through op and checks that it reports want.
func (f *fixture) pauseQueue(op store.Operator, queue string, want bool) {
	f.t.Helper()
	ok, err := op.PauseQueue(f.ctx, queue)
	require.NoError(f.t, err)
	require.Equal(f.t, want, ok, "PauseQueue(%q) reports whether the queue was running", queue)
	f.queuePaused(op, queue, true)
}

// resumeQueue resumes queue through op and checks that it reports want.
func (f *fixture) resumeQueue(op store.Operator, queue string, want bool) {
	f.t.Helper()
	ok, err := op.ResumeQueue(f.ctx, queue)
	require.NoError(f.t, err)
	require.Equal(f.t, want, ok, "ResumeQueue(%q) reports whether the queue was paused", queue)
	f.queuePaused(op, queue, false)
}

// queuePaused checks that QueuePaused of queue reports want, through op
// and through the engine the scenario claims from, when they differ.
func (f *fixture) queuePaused(op store.Operator, queue string, want bool) {
	f.t.Helper()
	for _, o := range []store.Operator{op, f.s.(store.Operator)} {
		paused, err := o.QueuePaused(f.ctx, queue)
		require.NoError(f.t, err)
		require.Equal(f.t, want, paused, "QueuePaused(%q)", queue)
	}
}

// pauseKey pauses key of the scenario's queue and checks that it reports
// want.
func (f *fixture) pauseKey(op store.Operator, key string, want bool) {
	f.t.Helper()
	ok, err := op.PauseKey(f.ctx, f.q, key)
	require.NoError(f.t, err)
	require.Equal(f.t, want, ok, "PauseKey(%q) reports whether the key was not paused", key)
}

// resumeKey resumes key of the scenario's queue and checks that it
// reports want.
func (f *fixture) resumeKey(op store.Operator, key string, want bool) {
	f.t.Helper()
	ok, err := op.ResumeKey(f.ctx, f.q, key)
	require.NoError(f.t, err)
	require.Equal(f.t, want, ok, "ResumeKey(%q) reports whether the key was paused", key)
}

// retryNow makes key of the scenario's queue ready now and checks that it
// reports want.
func (f *fixture) retryNow(op store.Operator, key string, want bool) {
	f.t.Helper()
	ok, err := op.RetryNow(f.ctx, f.q, key)
	require.NoError(f.t, err)
	require.Equal(f.t, want, ok, "RetryNow(%q) reports whether the key was retrying or deferred", key)
}

// dropKey drops key of the scenario's queue with reason and checks that
// it moved want values.
func (f *fixture) dropKey(op store.Operator, key, reason string, want int) {
	f.t.Helper()
	n, err := op.DropKey(f.ctx, f.q, key, reason)
	require.NoError(f.t, err)
	require.Equal(f.t, want, n, "DropKey(%q) returns how many values it moved", key)
}

// claimAll claims up to keys keys, whole, and checks that they are want,
// in order.
func (f *fixture) claimAll(keys int, want ...string) []store.Lease {
	f.t.Helper()
	ls, _ := f.claim(store.ClaimParams{Keys: keys, TTL: ttl})
	require.Equal(f.t, want, keysOf(ls), "the keys a Claim leases, in order")
	return ls
}

// worker runs a worker of the scenario's queue on s, as a Runner's loop
// does: Claim, and Wait for next when it leased nothing. It sends each
// lease it takes on the channel, and stops at the end of the scenario or
// at its first error, which it sends on the other channel.
func (f *fixture) worker(s store.Store) (<-chan store.Lease, <-chan error) {
	ctx, cancel := context.WithCancel(f.ctx)
	leases, errs := make(chan store.Lease, 16), make(chan error, 1)
	done := make(chan struct{})
	f.t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			ls, next, err := s.Claim(ctx, f.q, one())
			if err == nil && len(ls) == 0 {
				err = s.Wait(ctx, f.q, min(next, time.Hour))
			}
			if err != nil {
				if ctx.Err() == nil {
					errs <- err
				}
				return
			}
			for _, l := range ls {
				leases <- l
			}
		}
	}()
	return leases, errs
}

// idleFor checks that the worker of leases leases nothing for d.
func (f *fixture) idleFor(leases <-chan store.Lease, errs <-chan error, d time.Duration, why string) {
	f.t.Helper()
	select {
	case l := <-leases:
		require.Fail(f.t, "a worker leased a key it must not", "key %q: %s", l.Key, why)
	case err := <-errs:
		require.NoError(f.t, err, "the worker")
	case <-time.After(d):
	}
}

// woken checks that the worker of leases, which waits, leases key within
// f.late of a change that made it ready, and returns the lease.
func (f *fixture) woken(leases <-chan store.Lease, errs <-chan error, key, change string) store.Lease {
	f.t.Helper()
	select {
	case l := <-leases:
		require.Equal(f.t, key, l.Key, "the key the worker leased after %s", change)
		return l
	case err := <-errs:
		require.NoError(f.t, err, "the worker")
	case <-time.After(f.late):
		require.Fail(f.t, "a waiting worker slept through a change", "%s did not wake it within %v", change, f.late)
	}
	return store.Lease{}
}

// testOperatePauseQueue: a paused queue leases nothing, in Claim or
// FinishAndClaim, which say Never, while Adds land, the leases out run
// on and end as usual, and retry delays pass; other queues go on. Resumed,
// its keys are leased in the order they became ready, the pause
// notwithstanding. Pause and resume report what the queue was doing, and
// Stats and QueuePaused what it does.
func testOperatePauseQueue(f *fixture) {
	op := f.operator()
	f.queuePaused(op, f.q, false)
	delay := 2 * f.tick
	f.add("a", "a1")
	f.add("b", "b1")
	f.add("r", "r1")
	f.add("f", "f1", "f2")
	la := f.claimOne(one())
	f.values(la, "a", "a1")
	lb := f.claimOne(one())
	f.values(lb, "b", "b1")
	lr := f.claimOne(one())
	lf := f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	f.values(lf, "f", "f1")
	f.add("w", "w1") // ready before the pause

	f.resumeQueue(op, f.q, false)
	f.pauseQueue(op, f.q, true)
	f.pauseQueue(op, f.q, false)
	require.True(f.t, f.stats().Paused, "Stats.Paused of a paused queue")

	ls, next := f.claim(store.ClaimParams{Keys: 3, TTL: ttl})
	require.Empty(f.t, ls, "a paused queue leases nothing")
	require.Equal(f.t, store.Never, next, "Claim's next on a paused queue")

	// The leases out run on, and end as usual.
	require.NoError(f.t, f.s.Extend(f.ctx, la, ttl), "Extend of a lease out when the queue was paused")
	f.ack(la, false)
	if fc, ok := f.s.(store.FinishClaimer); ok {
		more, ls, next, err := fc.FinishAndClaim(f.ctx, lb, store.Outcome{Kind: store.Ack}, store.ClaimParams{Keys: 3, TTL: ttl})
		require.NoError(f.t, err, "FinishAndClaim on a paused queue still finishes")
		require.False(f.t, more)
		require.Empty(f.t, ls, "FinishAndClaim leases nothing on a paused queue")
		require.Equal(f.t, store.Never, next, "FinishAndClaim's next on a paused queue")
	} else {
		f.ack(lb, false)
	}
	f.ack(lf, true) // f2 is ready now, behind w
	f.finish(lr, store.Outcome{Kind: store.Retry, After: delay})
	ra := time.Now()

	// r's retry delay passes; Adds land.
	f.pauseUntil(ra.Add(delay + f.tick/2))
	f.add("c", "c1")
	f.add("a", "a2")
	st := f.stats()
	require.Equal(f.t, store.Stats{Values: 5, Keys: 5, Ready: 5, Paused: true}, st,
		"a paused queue's counts: the Adds landed, r's delay passed")
	_, next = f.claim(one())
	require.Equal(f.t, store.Never, next, "Claim's next on a paused queue")

	// Another queue goes on.
	free := f.other("free")
	require.NoError(f.t, f.s.Add(f.ctx, free, "k", bytesOf([]string{"1"}), store.AddParams{}))
	ls, _, err := f.s.Claim(f.ctx, free, one())
	require.NoError(f.t, err)
	require.Len(f.t, ls, 1, "a queue that is not paused leases as usual")
	f.ack(ls[0], false)

	f.resumeQueue(op, f.q, true)
	f.resumeQueue(op, f.q, false)
	require.False(f.t, f.stats().Paused, "Stats.Paused of a resumed queue")
	ls = f.claimAll(6, "w", "f", "r", "c", "a")
	f.values(ls[1], "f", "f2")
	f.values(ls[2], "r", "r1")
	require.Equal(f.t, 2, ls[2].Attempt, "r's retry")
	for _, l := range ls {
		f.ack(l, false)
	}

	// A queue that holds nothing is paused too, and Adds then wait.
	empty := f.other("empty")
	f.pauseQueue(op, empty, true)
	st, err = f.s.Stats(f.ctx, empty)
	require.NoError(f.t, err)
	require.Equal(f.t, store.Stats{Paused: true}, st, "Stats of a paused queue that holds nothing")
	require.NoError(f.t, f.s.Add(f.ctx, empty, "k", bytesOf([]string{"1"}), store.AddParams{}))
	ls, next, err = f.s.Claim(f.ctx, empty, one())
	require.NoError(f.t, err)
	require.Empty(f.t, ls, "a paused queue leases nothing")
	require.Equal(f.t, store.Never, next)
	f.resumeQueue(op, empty, true)
	ls, _, err = f.s.Claim(f.ctx, empty, one())
	require.NoError(f.t, err)
	require.Len(f.t, ls, 1)
	f.ack(ls[0], false)
	f.resumeQueue(op, f.other("never"), false)
}

// testOperateResumeQueueWakes: a worker that waits on a paused queue, in
// another process than the operator's, leases nothing while it is paused,
// however many values come, and is woken by ResumeQueue.
func testOperateResumeQueueWakes(f *fixture) {
	op := f.operator()
	f.pauseQueue(op, f.q, true)
	leases, errs := f.worker(f.s)
	f.pause(f.tick)
	f.add("k", "1")
	f.add("j", "1")
	f.idleFor(leases, errs, 2*f.tick, "the queue is paused")
	f.resumeQueue(op, f.q, true)
	f.ack(f.woken(leases, errs, "k", "ResumeQueue"), false)
	f.ack(f.woken(leases, errs, "j", "ResumeQueue"), false)
}

// testOperateDoneContext: an Operator call whose ctx is already done
// returns ctx.Err() and changes nothing.
func testOperateDoneContext(f *fixture) {
	op := f.operator()
	f.add("k", "1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Retry, After: time.Hour})
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	_, err := op.PauseQueue(ctx, f.q)
	require.ErrorIs(f.t, err, context.Canceled)
	_, err = op.ResumeQueue(ctx, f.q)
	require.ErrorIs(f.t, err, context.Canceled)
	_, err = op.QueuePaused(ctx, f.q)
	require.ErrorIs(f.t, err, context.Canceled)
	_, err = op.PauseKey(ctx, f.q, "k")
	require.ErrorIs(f.t, err, context.Canceled)
	_, err = op.ResumeKey(ctx, f.q, "k")
	require.ErrorIs(f.t, err, context.Canceled)
	_, err = op.RetryNow(ctx, f.q, "k")
	require.ErrorIs(f.t, err, context.Canceled)
	_, err = op.DropKey(ctx, f.q, "k", "x")
	require.ErrorIs(f.t, err, context.Canceled)
	require.Equal(f.t, store.Stats{Values: 1, Keys: 1, Retrying: 1}, f.stats(), "nothing changed")
}
