package storetest

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// inspector returns the Inspector the inspection scenarios read through,
// or skips the scenario when the engine has none. It is the twin's when
// the twin implements it: an operator looks from a process of their own.
func (f *fixture) inspector() store.Inspector {
	f.t.Helper()
	if _, ok := f.s.(store.Inspector); !ok {
		f.t.Skip("the engine does not implement store.Inspector")
	}
	if in, ok := f.twin.(store.Inspector); ok {
		return in
	}
	return f.s.(store.Inspector)
}

// keyInfo returns what key of the scenario's queue is doing, which must
// hold values, after checking that its Values and Oldest agree with the
// key's values as Values returns them.
func (f *fixture) keyInfo(in store.Inspector, key string) store.KeyInfo {
	f.t.Helper()
	info, ok, err := in.Key(f.ctx, f.q, key)
	require.NoError(f.t, err)
	require.True(f.t, ok, "Key(%q): the key holds values", key)
	require.Equal(f.t, key, info.Key)
	vs := f.storedValues(in, f.q, key, 1<<20)
	require.Equal(f.t, len(vs), info.Values, "Values of key %q", key)
	require.NotEmpty(f.t, vs, "Values of key %q", key)
	sameTime(f, vs[0].Added, info.Oldest, "Oldest of key %q: when its first value was added", key)
	return info
}

// noKey checks that key of queue holds no values.
func (f *fixture) noKey(in store.Inspector, queue, key string) {
	f.t.Helper()
	info, ok, err := in.Key(f.ctx, queue, key)
	require.NoError(f.t, err)
	require.False(f.t, ok, "Key(%q) of a key without values", key)
	require.Zero(f.t, info, "KeyInfo of a key without values")
	require.Empty(f.t, f.storedValues(in, queue, key, 10), "Values of a key without values")
}

// storedValues returns up to limit of key's values.
func (f *fixture) storedValues(in store.Inspector, queue, key string, limit int) []store.StoredValue {
	f.t.Helper()
	vs, err := in.Values(f.ctx, queue, key, limit)
	require.NoError(f.t, err)
	require.LessOrEqual(f.t, len(vs), max(limit, 0), "Values returned more than its limit")
	return vs
}

// expectKey checks what key is doing against want, all but its times,
// whose zero-ness only it checks, and returns it for the caller to check
// the times.
func (f *fixture) expectKey(in store.Inspector, key string, want store.KeyInfo) store.KeyInfo {
	f.t.Helper()
	got := f.keyInfo(in, key)
	want.Key = key
	f.sameBut(want, got, "key %q", key)
	return got
}

// sameBut checks got against want, all but their times, of which only
// Since's and Until's zero-ness is compared (Oldest is never zero), and
// Ahead, which depends on the other keys (see testOperateAhead and
// testInspectModel).
func (f *fixture) sameBut(want, got store.KeyInfo, msg string, args ...any) {
	f.t.Helper()
	require.Equal(f.t, want.Since.IsZero(), got.Since.IsZero(), append([]any{"Since is zero in state %v of " + msg, got.State}, args...)...)
	require.Equal(f.t, want.Until.IsZero(), got.Until.IsZero(), append([]any{"Until is zero in state %v of " + msg, got.State}, args...)...)
	want.Since, want.Until, want.Oldest, want.Ahead = time.Time{}, time.Time{}, time.Time{}, 0
	got.Since, got.Until, got.Oldest, got.Ahead = time.Time{}, time.Time{}, time.Time{}, 0
	require.Equal(f.t, want, got, append([]any{msg}, args...)...)
}

// sameInfo checks that two readings of a key that did not change agree,
// times included, all but Ahead, which Key alone shows.
func sameInfo(f *fixture, want, got store.KeyInfo, msg string, args ...any) {
	f.t.Helper()
	sameTime(f, want.Since, got.Since, "Since of "+msg, args...)
	sameTime(f, want.Until, got.Until, "Until of "+msg, args...)
	sameTime(f, want.Oldest, got.Oldest, "Oldest of "+msg, args...)
	want.Since, want.Until, want.Oldest, want.Ahead = time.Time{}, time.Time{}, time.Time{}, 0
	got.Since, got.Until, got.Oldest, got.Ahead = time.Time{}, time.Time{}, time.Time{}, 0
	require.Equal(f.t, want, got, append([]any{msg}, args...)...)
}

// sameTime checks that got is the instant want (time.Time's Equal: the
// same instant whatever its location or monotonic reading).
func sameTime(f *fixture, want, got time.Time, msg string, args ...any) {
	f.t.Helper()
	if !want.Equal(got) {
		require.Failf(f.t, "not the same instant", "%v, want %v (%v apart): "+msg,
			append([]any{got, want, got.Sub(want)}, args...)...)
	}
}

// between checks that got, a time on the engine's clock, is within f.late
// of [b, a], the wall-clock times read before and after the call that set
// it (see the package doc: the engine's clock is its own).
func (f *fixture) between(got, b, a time.Time, msg string, args ...any) {
	f.t.Helper()
	require.WithinRange(f.t, got, b.Add(-f.late), a.Add(f.late), append([]any{msg}, args...)...)
}

// claimAs claims one key, which must be ready, for holder.
func (f *fixture) claimAs(holder string, p store.ClaimParams) (l store.Lease, b, a time.Time) {
	f.t.Helper()
	p.Holder = holder
	b = time.Now()
	l = f.claimOne(p)
	return l, b, time.Now()
}

// finishAt ends l with o and returns the wall-clock times around it.
func (f *fixture) finishAt(l store.Lease, o store.Outcome) (b, a time.Time) {
	f.t.Helper()
	b = time.Now()
	f.finish(l, o)
	return b, time.Now()
}

// testInspectStates: a key in each state, read with Key, as the contract
// says each: its state, since and until when (exactly, where the engine's
// own times fix it), the attempt, fence and holder of its last lease, the
// error of its last failure, its values and its oldest. Reading changes
// nothing.
func testInspectStates(f *fixture) {
	in := f.inspector()
	f.noKey(in, f.q, "absent")
	f.noKey(in, f.other("unused"), "k")
	hour := time.Hour

	// Leased, by a named holder, with a burst behind the lease.
	f.add("leased", "l1")
	leased, lb, la := f.claimAs("worker-1 (pid 42)", store.ClaimParams{Keys: 1, TTL: hour})
	f.addP("leased", store.AddParams{Wait: hour}, "l2")

	// Retrying after one failure, a value behind its batch.
	f.add("retrying", "t1")
	rl := f.claimOne(one())
	f.add("retrying", "t2")
	rb, ra := f.finishAt(rl, store.Outcome{Kind: store.Retry, After: hour, Err: "boom"})

	// Held after two failures, the rest of its values behind.
	mb1 := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl}
	f.add("held", "h1", "h2")
	f.finish(f.claimOne(mb1), store.Outcome{Kind: store.Retry, Err: "first"})
	hl := f.claimOne(mb1)
	f.values(hl, "held", "h1")
	require.Equal(f.t, 2, hl.Attempt)
	hb, ha := f.finishAt(hl, store.Outcome{Kind: store.Hold, Err: "stuck"})

	// Deferred on its second attempt: the error of the first is kept.
	f.add("deferred", "d1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Retry, Err: "flaky"})
	dl := f.claimOne(one())
	db, da := f.finishAt(dl, store.Outcome{Kind: store.Defer, After: hour})

	// Debouncing: by a quiet period an Add moved, by a max-wait deadline
	// that came first, and by both at once.
	f.addP("quiet", store.AddParams{Wait: hour, MaxWait: 3 * hour}, "q1")
	f.addP("quiet", store.AddParams{Wait: hour, MaxWait: 3 * hour}, "q2")
	f.addP("maxwait", store.AddParams{Wait: hour, MaxWait: 30 * time.Minute}, "m1")
	f.addP("maxwait", store.AddParams{Wait: 2 * hour, MaxWait: 30 * time.Minute}, "m2")
	f.addP("tie", store.AddParams{Wait: hour, MaxWait: hour}, "x1")

	// Ready, by two Adds, with a burst behind.
	f.add("ready", "r1", "r2")
	f.add("ready", "r3")
	f.addP("ready", store.AddParams{Wait: hour}, "r4")

	// Leased: since the Claim, until its TTL from then.
	info := f.expectKey(in, "leased", store.KeyInfo{State: store.Leased, Since: lb, Until: lb,
		Attempt: 1, Fence: leased.Fence, Holder: "worker-1 (pid 42)", Values: 2})
	f.between(info.Since, lb, la, "Since of a leased key: its Claim")
	sameTime(f, info.Since.Add(hour), info.Until, "Until of a leased key: its TTL after its Claim")

	// Retrying: until the delay after the Retry.
	info = f.expectKey(in, "retrying", store.KeyInfo{State: store.Retrying, Until: rb,
		Attempt: 1, Fence: rl.Fence, Err: "boom", Values: 2})
	f.between(info.Until, rb.Add(hour), ra.Add(hour), "Until of a retrying key: its delay after the Retry")

	// Held: since the Hold, until Release.
	info = f.expectKey(in, "held", store.KeyInfo{State: store.Held, Since: hb,
		Attempt: 2, Fence: hl.Fence, Err: "stuck", Values: 2})
	f.between(info.Since, hb, ha, "Since of a held key: its Hold")

	// Deferred: until the delay after the Defer, with the Retry's error.
	info = f.expectKey(in, "deferred", store.KeyInfo{State: store.Deferred, Until: db,
		Attempt: 2, Fence: dl.Fence, Err: "flaky", Values: 1})
	f.between(info.Until, db.Add(hour), da.Add(hour), "Until of a deferred key: its delay after the Defer")

	// Debouncing: until the deadline of the last Add, from the times the
	// engine gave the values.
	vs := f.storedValues(in, f.q, "quiet", 10)
	require.Len(f.t, vs, 2)
	info = f.expectKey(in, "quiet", store.KeyInfo{State: store.Debouncing, Until: vs[1].Added, Values: 2})
	sameTime(f, vs[1].Added.Add(hour), info.Until, "Until of a burst: Wait after its last Add")
	vs = f.storedValues(in, f.q, "maxwait", 10)
	require.Len(f.t, vs, 2)
	info = f.expectKey(in, "maxwait", store.KeyInfo{State: store.Debouncing, Until: vs[0].Added, MaxWait: true, Values: 2})
	sameTime(f, vs[0].Added.Add(30*time.Minute), info.Until, "Until of a burst: MaxWait after its first Add")
	vs = f.storedValues(in, f.q, "tie", 10)
	require.Len(f.t, vs, 1)
	info = f.expectKey(in, "tie", store.KeyInfo{State: store.Debouncing, Until: vs[0].Added, Values: 1})
	sameTime(f, vs[0].Added.Add(hour), info.Until, "Until of a burst whose quiet period and max-wait end at once")

	// Ready: since the Add that made it ready, which later Adds leave.
	vs = f.storedValues(in, f.q, "ready", 10)
	require.Len(f.t, vs, 4)
	info = f.expectKey(in, "ready", store.KeyInfo{State: store.Ready, Since: vs[0].Added, Values: 4})
	sameTime(f, vs[0].Added, info.Since, "Since of a ready key: the Add that made it ready")

	// Reading changed nothing: the ready key is leased as it would have
	// been, and it is the only one.
	l := f.claimOne(store.ClaimParams{Keys: 2, TTL: ttl})
	f.values(l, "ready", "r1", "r2", "r3")
	f.none()
	f.expectKey(in, "ready", store.KeyInfo{State: store.Leased, Since: lb, Until: lb,
		Attempt: 1, Fence: l.Fence, Values: 4})
}

// testInspectDoneContext: an Inspector call whose ctx is already done
// returns ctx.Err().
func testInspectDoneContext(f *fixture) {
	in := f.inspector()
	f.add("k", "1")
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	_, err := in.Queues(ctx)
	require.ErrorIs(f.t, err, context.Canceled)
	_, err = in.Keys(ctx, f.q, store.KeyQuery{})
	require.ErrorIs(f.t, err, context.Canceled)
	_, _, err = in.Key(ctx, f.q, "k")
	require.ErrorIs(f.t, err, context.Canceled)
	_, err = in.Values(ctx, f.q, "k", 10)
	require.ErrorIs(f.t, err, context.Canceled)
	f.keyInfo(in, "k")
}
