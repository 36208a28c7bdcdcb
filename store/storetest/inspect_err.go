package storetest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testInspectErr: a key shows the error of its head batch's last Retry or
// Hold, whatever it does next (a lease, a Defer), until the batch is
// acked, dropped or released; a Retry or Hold without one clears it, and
// the errors of a Defer or an Ack are not kept.
func testInspectErr(f *fixture) {
	in := f.inspector()
	mb1 := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl}
	expect := func(state store.KeyState, attempt int, fence uint64, err string, values int) {
		f.t.Helper()
		want := store.KeyInfo{State: state, Attempt: attempt, Fence: fence, Err: err, Values: values}
		if state == store.Ready || state == store.Leased || state == store.Held {
			want.Since = time.Now()
		}
		if state == store.Leased {
			want.Until = want.Since
		}
		f.expectKey(in, "k", want)
	}
	f.add("k", "1", "2", "3")
	expect(store.Ready, 0, 0, "", 3)
	l := f.claimOne(mb1)
	expect(store.Leased, 1, l.Fence, "", 3)
	f.finish(l, store.Outcome{Kind: store.Retry, Err: "e1"})
	expect(store.Ready, 1, l.Fence, "e1", 3)
	l = f.claimOne(mb1)
	expect(store.Leased, 2, l.Fence, "e1", 3)
	f.finish(l, store.Outcome{Kind: store.Defer, Err: "not kept"})
	expect(store.Ready, 2, l.Fence, "e1", 3)
	l = f.claimOne(mb1)
	require.Equal(f.t, 2, l.Attempt)
	f.finish(l, store.Outcome{Kind: store.Retry})
	expect(store.Ready, 2, l.Fence, "", 3)
	l = f.claimOne(mb1)
	f.finish(l, store.Outcome{Kind: store.Retry, Err: "e3"})
	expect(store.Ready, 3, l.Fence, "e3", 3)

	// An Ack ends the batch, and its error.
	l = f.claimOne(mb1)
	f.values(l, "k", "1")
	f.finish(l, store.Outcome{Kind: store.Ack, Err: "not kept"})
	expect(store.Ready, 0, l.Fence, "", 2)

	// A Hold says why; a Release ends it.
	l = f.claimOne(mb1)
	f.finish(l, store.Outcome{Kind: store.Retry, Err: "e4"})
	l = f.claimOne(mb1)
	f.finish(l, store.Outcome{Kind: store.Hold, Err: "stuck"})
	expect(store.Held, 2, l.Fence, "stuck", 2)
	ok, err := f.s.Release(f.ctx, f.q, "k")
	require.NoError(f.t, err)
	require.True(f.t, ok)
	expect(store.Ready, 0, l.Fence, "", 2)
	l = f.claimOne(mb1)
	f.finish(l, store.Outcome{Kind: store.Hold})
	expect(store.Held, 1, l.Fence, "", 2)
	_, err = f.s.Release(f.ctx, f.q, "k")
	require.NoError(f.t, err)

	// A Drop ends the batch, and its error.
	l = f.claimOne(mb1)
	f.finish(l, store.Outcome{Kind: store.Retry, Err: "e5"})
	l = f.claimOne(mb1)
	f.values(l, "k", "2")
	f.finish(l, store.Outcome{Kind: store.Drop, Err: "dead"})
	expect(store.Ready, 0, l.Fence, "", 1)
	l = f.claimOne(mb1)
	f.finish(l, store.Outcome{Kind: store.Retry, Err: "e6"})
	l = f.claimOne(mb1)
	f.finish(l, store.Outcome{Kind: store.Drop, Err: "dead"})
	f.noKey(in, f.q, "k")

	// A key that held no values starts over: no fence, no error.
	f.add("k", "4")
	expect(store.Ready, 0, 0, "", 1)
}

// testInspectHolder: a leased key shows the Holder of the Claim (or of the
// FinishAndClaim) that leased it, for that lease only.
func testInspectHolder(f *fixture) {
	in := f.inspector()
	p := func(holder string) store.ClaimParams { return store.ClaimParams{Keys: 1, TTL: ttl, Holder: holder} }
	holder := func(want string) {
		f.t.Helper()
		info := f.keyInfo(in, "k")
		require.Equal(f.t, want, info.Holder, "Holder of key %q, %v", "k", info.State)
	}
	f.add("k", "1")
	holder("")
	l := f.claimOne(p("node-a:4242"))
	holder("node-a:4242")
	require.NoError(f.t, f.s.Extend(f.ctx, l, ttl))
	holder("node-a:4242")
	f.finish(l, store.Outcome{Kind: store.Retry})
	holder("")
	l = f.claimOne(p(""))
	holder("")
	f.finish(l, store.Outcome{Kind: store.Retry})
	l = f.claimOne(p("ünïcode host/1"))
	holder("ünïcode host/1")
	f.finish(l, store.Outcome{Kind: store.Hold})
	holder("")
	_, err := f.s.Release(f.ctx, f.q, "k")
	require.NoError(f.t, err)
	l = f.claimOne(p("b"))
	holder("b")

	fc, ok := f.s.(store.FinishClaimer)
	if !ok {
		return
	}
	f.add("k", "2")
	_, ls, _, err := fc.FinishAndClaim(f.ctx, l, store.Outcome{Kind: store.Ack}, p("c"))
	require.NoError(f.t, err)
	require.Len(f.t, ls, 1)
	f.values(ls[0], "k", "2")
	holder("c")
}
