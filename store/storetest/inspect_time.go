package storetest

import (
	"slices"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// awaitState reads key until it is in state, and fails if it is not by
// f.late after the deadline that puts it there, which passed by now or
// will by notAfter, as the wall clock reads it.
func (f *fixture) awaitState(in store.Inspector, key string, state store.KeyState, notAfter time.Time) store.KeyInfo {
	f.t.Helper()
	end := notAfter.Add(f.late)
	for {
		info := f.keyInfo(in, key)
		if info.State == state {
			return info
		}
		require.True(f.t, time.Now().Before(end), "key %q is %v, not %v, %v after its deadline", key, info.State, state, f.late)
		f.pause(f.tick / 4)
	}
}

// testInspectReadySince: a key whose burst came due, whose lease lapsed,
// or whose retry or deferral delay passed is ready since exactly the
// Until it showed before, with the attempt, fence and error of its last
// lease and no holder; the ready order is the order of those instants.
// A Finish or a Release that puts a key back makes it ready since then.
func testInspectReadySince(f *fixture) {
	in := f.inspector()
	d := 3 * f.tick
	begin := time.Now()
	f.addP("burst", store.AddParams{Wait: d}, "b1")
	f.add("lapse", "l1")
	lapse := f.claimOne(store.ClaimParams{Keys: 1, TTL: d, Holder: "gone"})
	f.add("retry", "r1")
	retry := f.claimOne(one())
	f.finish(retry, store.Outcome{Kind: store.Retry, After: d, Err: "e"})
	f.add("defer", "d1")
	deferred := f.claimOne(one())
	f.finish(deferred, store.Outcome{Kind: store.Defer, After: d})
	last := time.Now()

	keys := []string{"burst", "lapse", "retry", "defer"}
	before := map[string]store.KeyInfo{}
	for _, k := range keys {
		before[k] = f.keyInfo(in, k)
	}
	if since := time.Since(begin); since >= d {
		f.slow(since, d, "a deadline may have passed before the keys were read")
	}
	f.sameBut(store.KeyInfo{Key: "burst", State: store.Debouncing, Until: begin, Values: 1}, before["burst"], "a burst")
	f.sameBut(store.KeyInfo{Key: "lapse", State: store.Leased, Since: begin, Until: begin, Attempt: 1, Fence: lapse.Fence, Holder: "gone", Values: 1},
		before["lapse"], "a lease")
	f.sameBut(store.KeyInfo{Key: "retry", State: store.Retrying, Until: begin, Attempt: 1, Fence: retry.Fence, Err: "e", Values: 1},
		before["retry"], "a retry")
	f.sameBut(store.KeyInfo{Key: "defer", State: store.Deferred, Until: begin, Attempt: 1, Fence: deferred.Fence, Values: 1},
		before["defer"], "a deferral")
	sameTime(f, f.storedValues(in, f.q, "burst", 1)[0].Added.Add(d), before["burst"].Until, "Until of a burst: Wait after its Add")
	sameTime(f, before["lapse"].Since.Add(d), before["lapse"].Until, "Until of a lease: its TTL after its Claim")

	want := map[string]store.KeyInfo{
		"burst": {Key: "burst", State: store.Ready, Since: begin, Values: 1},
		"lapse": {Key: "lapse", State: store.Ready, Since: begin, Attempt: 1, Fence: lapse.Fence, Values: 1},
		"retry": {Key: "retry", State: store.Ready, Since: begin, Attempt: 1, Fence: retry.Fence, Err: "e", Values: 1},
		"defer": {Key: "defer", State: store.Ready, Since: begin, Attempt: 1, Fence: deferred.Fence, Values: 1},
	}
	for _, k := range keys {
		got := f.awaitState(in, k, store.Ready, last.Add(d))
		f.sameBut(want[k], got, "key %q once its deadline passed", k)
		sameTime(f, before[k].Until, got.Since, "Since of key %q once ready: the Until it showed before", k)
		want[k] = got
	}

	// Claim leases them in the order of those instants.
	order := slices.Clone(keys)
	slices.SortStableFunc(order, func(a, b string) int { return want[a].Since.Compare(want[b].Since) })
	ls, _ := f.claim(store.ClaimParams{Keys: 4, TTL: ttl})
	require.Len(f.t, ls, 4)
	for i := 1; i < len(order); i++ {
		if want[order[i-1]].Since.Equal(want[order[i]].Since) {
			order = keysOf(ls) // a tie: either order is right
			break
		}
	}
	require.Equal(f.t, order, keysOf(ls), "keys are leased in the order they became ready")

	// Put back by a Finish and by a Release: ready since then.
	for _, l := range ls {
		f.add(l.Key, "more")
	}
	byKey := map[string]store.Lease{}
	for _, l := range ls {
		byKey[l.Key] = l
	}
	b, a := f.finishAt(byKey["burst"], store.Outcome{Kind: store.Ack})
	info := f.expectKey(in, "burst", store.KeyInfo{State: store.Ready, Since: b, Fence: byKey["burst"].Fence, Values: 1})
	f.between(info.Since, b, a, "Since of a key an Ack left with values")
	b, a = f.finishAt(byKey["retry"], store.Outcome{Kind: store.Retry, Err: "again"})
	info = f.expectKey(in, "retry", store.KeyInfo{State: store.Ready, Since: b, Attempt: 2, Fence: byKey["retry"].Fence, Err: "again", Values: 2})
	f.between(info.Since, b, a, "Since of a key retried without delay")
	b, a = f.finishAt(byKey["defer"], store.Outcome{Kind: store.Defer})
	info = f.expectKey(in, "defer", store.KeyInfo{State: store.Ready, Since: b, Attempt: 1, Fence: byKey["defer"].Fence, Values: 2})
	f.between(info.Since, b, a, "Since of a key deferred without delay")
	f.finish(byKey["lapse"], store.Outcome{Kind: store.Hold, Err: "why"})
	b = time.Now()
	ok, err := f.s.Release(f.ctx, f.q, "lapse")
	require.NoError(f.t, err)
	require.True(f.t, ok)
	a = time.Now()
	info = f.expectKey(in, "lapse", store.KeyInfo{State: store.Ready, Since: b, Fence: byKey["lapse"].Fence, Values: 2})
	f.between(info.Since, b, a, "Since of a released key")
}
