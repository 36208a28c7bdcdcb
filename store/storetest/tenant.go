package storetest

import (
	"fmt"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/pacerkit/pacer/store"
)

// fairTenants skips a scenario of tenants on an engine that lacks them.
func (f *fixture) fairTenants() {
	if _, ok := f.s.(store.FairTenants); !ok {
		f.t.Skip("the engine does not implement store.FairTenants")
	}
}

// tenantKeys adds n keys of tenant, named tenant and a number, each with
// vals values, ready at once, in order of their numbers when conc is 1.
func (f *fixture) tenantKeys(tenant string, weight, n, vals, conc int) {
	f.t.Helper()
	vs := make([]string, vals)
	for i := range vs {
		vs[i] = fmt.Sprint(i)
	}
	p := store.AddParams{Tenant: tenant, Weight: weight}
	var g errgroup.Group
	g.SetLimit(conc)
	for i := range n {
		g.Go(func() error {
			return f.s.Add(f.ctx, f.q, fmt.Sprintf("%s%05d", tenant, i), bytesOf(vs), p)
		})
	}
	require.NoError(f.t, g.Wait())
}

// turns claims one key at a time n times, acking each lease before the
// next Claim with p, and returns the keys in the order leased.
func (f *fixture) turns(n int, p store.ClaimParams) []store.Lease {
	f.t.Helper()
	var got []store.Lease
	for range n {
		l := f.claimOne(p)
		_, err := f.s.Finish(f.ctx, l, store.Outcome{Kind: store.Ack})
		require.NoError(f.t, err)
		got = append(got, l)
	}
	return got
}

// tenantOf returns the tenant of a key that tenantKeys added.
func tenantOf(key string) string { return key[:len(key)-5] }

// testTenantTurns: a tenant with 10,000 ready keys does not keep one with
// 10 waiting: with equal weights, the 10 all run within the first 20
// turns, each tenant's keys oldest first.
func testTenantTurns(f *fixture) {
	f.fairTenants()
	f.tenantKeys("A", 0, 10000, 1, 8)
	f.tenantKeys("B", 0, 10, 1, 1)
	got := f.turns(20, one())
	var a, b []string
	for _, l := range got {
		if tenantOf(l.Key) == "B" {
			b = append(b, l.Key)
		} else {
			a = append(a, l.Key)
		}
	}
	want := make([]string, 10)
	for i := range want {
		want[i] = fmt.Sprintf("B%05d", i)
	}
	require.Equal(f.t, want, b, "tenant B's 10 keys, oldest first, within the first 20 turns")
	require.Len(f.t, a, 10)
}

// testTenantWeights: tenants of weights 3 and 1, both with keys ready
// throughout, split 4,000 turns 3:1, within 5%.
func testTenantWeights(f *fixture) {
	f.fairTenants()
	f.tenantKeys("H", 3, 8, 500, 1)
	f.tenantKeys("L", 1, 8, 500, 1)
	p := store.ClaimParams{Keys: 4, MaxBatch: 1, TTL: ttl}
	count := map[string]int{}
	for turns := 0; turns < 4000; {
		ls, _ := f.claim(p)
		require.NotEmpty(f.t, ls)
		for _, l := range ls {
			count[tenantOf(l.Key)]++
			f.ack(l, true)
		}
		turns += len(ls)
	}
	ratio := float64(count["H"]) / float64(count["L"])
	require.InDelta(f.t, 3, ratio, 0.15, "turns of weights 3 and 1: %v", count)
}

// testTenantNoCredit: a tenant that had nothing ready earns no turns
// meanwhile: when it comes back it alternates with the busy tenant,
// rather than taking the turns it missed.
func testTenantNoCredit(f *fixture) {
	f.fairTenants()
	f.tenantKeys("A", 0, 60, 1, 1)
	f.turns(40, one())
	f.tenantKeys("B", 0, 10, 1, 1)
	got := f.turns(20, one())
	n := 0
	for i, l := range got {
		if tenantOf(l.Key) == "B" {
			n++
			require.False(f.t, i > 0 && tenantOf(got[i-1].Key) == "B", "tenant B took two turns in a row at %d", i)
		}
	}
	require.Equal(f.t, 10, n, "tenant B's turns among 20")
}

// testTenantKeys: keys without a tenant are one tenant among the others;
// a key stays with the tenant of its first value; weights are checked.
func testTenantKeys(f *fixture) {
	f.fairTenants()
	f.addP("a1", store.AddParams{Tenant: "a"}, "1")
	f.addP("a2", store.AddParams{Tenant: "a"}, "1")
	f.addP("a3", store.AddParams{Tenant: "a"}, "1")
	f.addP("a2", store.AddParams{Tenant: "b"}, "2") // a2 stays a's
	f.addP("b1", store.AddParams{Tenant: "b"}, "1")
	f.add("n1", "1")
	f.add("n2", "1")
	var got []string
	for _, l := range f.turns(7, store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl}) {
		got = append(got, l.Key)
	}
	// Equal virtual times go to the smaller tenant name: "" (no tenant),
	// then a, then b; a2's second value waits for its next turn.
	require.Equal(f.t, []string{"n1", "a1", "b1", "n2", "a2", "a3", "a2"}, got)

	for _, p := range []store.AddParams{{Tenant: "a", Weight: -1}, {Tenant: "a", Weight: store.MaxWeight + 1}, {Weight: 2}} {
		err := f.s.Add(f.ctx, f.q, "x", bytesOf([]string{"1"}), p)
		require.ErrorContains(f.t, err, "Weight", "Add with %+v", p)
	}
	require.Zero(f.t, f.stats().Values)
}

// testTenantPaths: a key of a tenant re-enters its tenant's turns by every
// path into the ready order (a burst that came due, a Finish with values
// left, a retry delay, a lapsed lease, a Release), and is leased in its
// tenant's turn while another tenant has many keys ready.
func testTenantPaths(f *fixture) {
	f.fairTenants()
	f.tenantKeys("A", 0, 40, 1, 1)
	next := func(path, want string) store.Lease {
		f.t.Helper()
		// The B key is leased within two turns; A's keys are acked.
		for range 2 {
			l := f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
			if l.Key == "b" {
				require.Equal(f.t, [][]byte{[]byte(want)}, l.Values, "after %s", path)
				return l
			}
			f.ack(l, false)
		}
		require.FailNow(f.t, "tenant B's key missed its turn", "after %s", path)
		return store.Lease{}
	}
	start := time.Now()
	f.addP("b", store.AddParams{Tenant: "B", Wait: 2 * f.tick}, "1", "2", "3")
	f.pauseUntil(start.Add(3 * f.tick))
	l := next("a burst came due", "1")
	f.ack(l, true)
	l = next("a Finish that left values", "2")
	f.finish(l, store.Outcome{Kind: store.Retry, After: f.tick})
	f.pause(2 * f.tick)
	l = next("a retry delay", "2")
	require.NoError(f.t, f.s.Extend(f.ctx, l, f.tick))
	f.pause(2 * f.tick) // the lease lapses
	l = next("a lapsed lease", "2")
	require.Equal(f.t, 3, l.Attempt)
	f.finish(l, store.Outcome{Kind: store.Hold})
	ok, err := f.s.Release(f.ctx, f.q, "b")
	require.NoError(f.t, err)
	require.True(f.t, ok)
	l = next("a Release", "2")
	f.ack(l, true)
	f.ack(next("a Finish", "3"), false)
	f.addP("b", store.AddParams{Tenant: "B"}, "4")
	f.ack(next("an Add", "4"), false)
}
