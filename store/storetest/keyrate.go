package storetest

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// The KeyRate scenarios hold an engine that implements
// store.KeyRateClaimer to its guarantees (see there), and are skipped for
// the others. A long interval stands for "no token in this scenario".
const longInterval = 40 * time.Second

// keyRate returns ClaimParams that lease up to keys batches of one value
// under r; it skips the scenario when the engine does not honour
// ClaimParams.KeyRate.
func (f *fixture) keyRate(r store.KeyRate, keys int) store.ClaimParams {
	f.t.Helper()
	if kr, ok := f.s.(store.KeyRateClaimer); !ok || !kr.ClaimsKeyRate() {
		f.t.Skip("the engine does not implement store.KeyRateClaimer")
	}
	return store.ClaimParams{Keys: keys, MaxBatch: 1, TTL: ttl, KeyRate: r}
}

// testKeyRateSpacing: with a burst of 1, a key's next lease waits for its
// token, an Interval after the one before, and is then leased; meanwhile
// the key shows Deferred until its token is due, no attempt counted, and
// Claim's next counts down to it.
func testKeyRateSpacing(f *fixture) {
	d := 4 * f.tick
	p := f.keyRate(store.KeyRate{Interval: d}, 1)
	f.add("k", "1", "2")
	b := time.Now()
	l := f.claimOne(p)
	f.values(l, "k", "1")
	f.ack(l, true)
	next := f.noneWithBefore(p, b, d)
	require.LessOrEqual(f.t, next, d, "Claim's next with a key waiting for its token")
	if _, ok := f.s.(store.Inspector); ok {
		info := f.keyInfo(f.inspector(), "k")
		f.before(b, d, "reading the deferred key")
		require.Equal(f.t, store.Deferred, info.State, "a key waiting for its token")
		f.between(info.Until, b.Add(d), time.Now().Add(d), "when the key's token is due")
	}
	l = f.await(p, b.Add(d))
	f.values(l, "k", "2")
	require.Equal(f.t, 1, l.Attempt, "a deferral for a token counts no attempt")
	f.ack(l, false)
}

// testKeyRateBurst: a key takes Burst leases in a row, and then none
// until its next token; every lease takes a token, a retried batch's
// next lease too.
func testKeyRateBurst(f *fixture) {
	p := f.keyRate(store.KeyRate{Interval: longInterval, Burst: 3}, 1)
	f.add("k", "1", "2", "3")
	l := f.claimOne(p)
	f.values(l, "k", "1")
	f.ack(l, true)
	l = f.claimOne(p)
	f.values(l, "k", "2")
	f.finish(l, store.Outcome{Kind: store.Retry})
	l = f.claimOne(p)
	f.values(l, "k", "2")
	require.Equal(f.t, 2, l.Attempt)
	f.finish(l, store.Outcome{Kind: store.Retry})
	next := f.noneWith(p)
	require.Greater(f.t, next, longInterval/2, "the fourth lease's token is an interval away")
}

// testKeyRateOthersGoOn: a Claim that finds the first ready key without a
// token leases the next ready keys in its place, in their order.
func testKeyRateOthersGoOn(f *fixture) {
	p := f.keyRate(store.KeyRate{Interval: longInterval}, 1)
	f.add("a", "1", "2")
	l := f.claimOne(p)
	f.values(l, "a", "1")
	f.ack(l, true) // a is ready first, without a token
	f.add("b", "1")
	f.add("c", "1")
	p.Keys = 2
	ls, _ := f.claim(p)
	require.Equal(f.t, []string{"b", "c"}, keysOf(ls), "the keys leased in place of the one without a token")
	for _, l := range ls {
		f.ack(l, false)
	}
	f.noneWith(p)
}

// testKeyRateOutlivesValues: a key that emptied finds its bucket as it
// left it when values come again.
func testKeyRateOutlivesValues(f *fixture) {
	p := f.keyRate(store.KeyRate{Interval: longInterval}, 1)
	f.add("k", "1")
	f.ack(f.claimOne(p), false)
	f.add("k", "2")
	f.noneWith(p)
	if _, ok := f.s.(store.Inspector); ok {
		require.Equal(f.t, store.Deferred, f.keyInfo(f.inspector(), "k").State)
	}
}

// testKeyRateOff: a Claim without a KeyRate leases a key that has no
// token, and leaves its bucket as it was: the next Claim with the rate
// still finds no token.
func testKeyRateOff(f *fixture) {
	p := f.keyRate(store.KeyRate{Interval: longInterval}, 1)
	f.add("k", "1", "2", "3")
	f.ack(f.claimOne(p), true)
	off := p
	off.KeyRate = store.KeyRate{}
	l := f.claimOne(off)
	f.values(l, "k", "2")
	f.ack(l, true)
	f.noneWith(p)
}

// testKeyRatePerKey: with PerKey, each of a key's leases takes a token:
// a Claim leases as many batches of a key as its burst has tokens.
func testKeyRatePerKey(f *fixture) {
	p := f.keyRate(store.KeyRate{Interval: longInterval, Burst: 2}, 3)
	p.PerKey = f.perKey(3, 3).PerKey
	f.add("k", "1", "2", "3", "4")
	ls, _ := f.claim(p)
	require.Len(f.t, ls, 2, "leases of a key with 2 tokens")
	f.values(ls[0], "k", "1")
	f.values(ls[1], "k", "2")
	f.noneWith(p)
}

// testKeyRateTenants: a key deferred for its token uses no turn of its
// tenant: tenants b and c tie on virtual time, b (the smaller name) has
// the turn, and its first ready key has no token, so its second is
// leased, not c's key.
func testKeyRateTenants(f *fixture) {
	f.fairTenants()
	p := f.keyRate(store.KeyRate{Interval: longInterval}, 1)
	tb, tc := store.AddParams{Tenant: "b"}, store.AddParams{Tenant: "c"}
	f.addP("b1", tb, "1", "2")
	lb := f.claimOne(p)
	f.values(lb, "b1", "1")
	f.addP("c0", tc, "1")
	f.ack(f.claimOne(p), false) // c0: b and c now tie
	f.ack(lb, true)             // b1 is ready again, first, with no token
	f.addP("b2", tb, "1")
	f.addP("c1", tc, "1")
	l := f.claimOne(p)
	f.values(l, "b2", "1")
	f.ack(l, false)
	l = f.claimOne(p)
	f.values(l, "c1", "1")
	f.ack(l, false)
	f.noneWith(p)
}

// testKeyRateInvalid: a Claim with a KeyRate that no engine takes is
// refused, and leases nothing.
func testKeyRateInvalid(f *fixture) {
	p := f.keyRate(store.KeyRate{Interval: time.Second, Burst: -1}, 1)
	f.add("k", "1")
	_, _, err := f.s.Claim(f.ctx, f.q, p)
	require.Error(f.t, err, "a negative Burst")
	p.KeyRate = store.KeyRate{Interval: time.Hour, Burst: 25}
	_, _, err = f.s.Claim(f.ctx, f.q, p)
	require.Error(f.t, err, "a bucket of more than a day")
	f.ack(f.claimOne(one()), false)
}

// testKeyRateManyWithoutToken: a key with a token behind many ready keys
// without one is leased within a few Claims, and until it is, no Claim
// tells its caller to wait: a Claim that stops deferring at a bound of
// its own returns a wait of 0, so a worker never sleeps while the key is
// ready.
func testKeyRateManyWithoutToken(f *fixture) {
	const without = 60
	p := f.keyRate(store.KeyRate{Interval: longInterval}, without)
	for i := range without {
		f.add(fmt.Sprintf("k%02d", i), "1", "2")
	}
	ls, _ := f.claim(p)
	require.Len(f.t, ls, without)
	for _, l := range ls {
		f.ack(l, true) // ready again, first, with no token
	}
	f.add("z", "1")
	p.Keys = 1
	var z store.Lease
	for try := 1; z.Key == ""; try++ {
		ls, next := f.claim(p)
		if len(ls) > 0 {
			z = ls[0]
			break
		}
		require.Zero(f.t, next, "Claim %d told its caller to wait while z was ready", try)
		require.Less(f.t, try, 10, "Claims before z was leased")
	}
	f.values(z, "z", "1")
	f.ack(z, false)
	for try := 1; ; try++ { // the Claims defer the keys left, and then wait
		ls, next := f.claim(p)
		require.Empty(f.t, ls, "a key leased without a token")
		if next > 0 {
			break
		}
		require.Less(f.t, try, 2*without, "Claims that found every key without a token")
	}
}
