package storetest

import (
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// tenantsAhead checks the TenantsAhead of each key of want, read by Key,
// and that the keys show 0 in a page.
func (f *fixture) tenantsAhead(in store.Inspector, step string, want map[string]int) {
	f.t.Helper()
	byKey, inPage := f.readTenantsAhead(in, want)
	f.checkTenantsAhead(step, want, byKey, inPage)
}

// readTenantsAhead reads the Key of each key of want, and a page of the
// queue's keys, for checkTenantsAhead.
func (f *fixture) readTenantsAhead(in store.Inspector, want map[string]int) (byKey, inPage map[string]store.KeyInfo) {
	f.t.Helper()
	page, err := in.Keys(f.ctx, f.q, store.KeyQuery{Limit: 1000})
	require.NoError(f.t, err)
	inPage, byKey = f.once(page.Keys), map[string]store.KeyInfo{}
	for key := range want {
		byKey[key] = f.keyInfo(in, key)
	}
	return byKey, inPage
}

func (f *fixture) checkTenantsAhead(step string, want map[string]int, byKey, inPage map[string]store.KeyInfo) {
	f.t.Helper()
	for key, n := range want {
		require.Equal(f.t, n, byKey[key].TenantsAhead, "%s: TenantsAhead of key %q", step, key)
		require.Zero(f.t, inPage[key].TenantsAhead, "%s: TenantsAhead of key %q in a page", step, key)
	}
}

// testTenantsAhead: Key's TenantsAhead of a ready key counts the other
// tenants with a key ready and not paused whose turn comes first: by
// virtual time, ties to the smaller name, the keys without a tenant being
// the tenant "". A tenant whose key came due counts before any Claim
// moved it; one whose keys are leased or not due, or all paused, does not
// count; the key's own tenant never does. A key that is not ready, or
// paused, shows 0.
func testTenantsAhead(f *fixture) {
	f.fairTenants()
	in, op := f.inspectOperator()
	start := time.Now()
	f.addP("a1", store.AddParams{Tenant: "a", Wait: 2 * f.tick}, "1")
	f.addP("b1", store.AddParams{Tenant: "b"}, "1")
	f.addP("c1", store.AddParams{Tenant: "c"}, "1")
	f.addP("c2", store.AddParams{Tenant: "c"}, "1")
	f.addP("d1", store.AddParams{Tenant: "d"}, "1")
	f.add("n1", "1")
	// Every tenant at virtual time 0: "", b, c, d by name; a1 debounces,
	// as long as the Adds and these reads take less than its quiet period.
	added := map[string]int{"n1": 0, "b1": 1, "c1": 2, "c2": 2, "d1": 3, "a1": 0}
	byKey, inPage := f.readTenantsAhead(in, added)
	if took := time.Since(start); took >= 2*f.tick {
		f.slow(took, 2*f.tick, "the Adds and the reads outlasted a1's quiet period")
	}
	f.checkTenantsAhead("added", added, byKey, inPage)
	require.Equal(f.t, store.Debouncing, byKey["a1"].State)

	f.pauseUntil(start.Add(3 * f.tick))
	// a1 came due, and no Claim moved it: a takes the clock's time, 0.
	f.tenantsAhead(in, "a1 came due", map[string]int{"a1": 1, "b1": 2, "c1": 3, "d1": 4})

	n1 := f.claimOne(one())
	require.Equal(f.t, "n1", n1.Key, "the tenant \"\" takes the first turn")
	// "" is at 1 with nothing ready; a, b, c and d at 0.
	f.tenantsAhead(in, "n1 leased", map[string]int{"n1": 0, "a1": 0, "b1": 1, "c1": 2, "c2": 2, "d1": 3})

	f.pauseKey(op, "c1", true)
	f.tenantsAhead(in, "c1 paused", map[string]int{"c1": 0, "c2": 2, "d1": 3})
	f.pauseKey(op, "c2", true)
	f.tenantsAhead(in, "c's keys paused", map[string]int{"c2": 0, "d1": 2})
	f.resumeKey(op, "c1", true)
	f.resumeKey(op, "c2", true)
	f.tenantsAhead(in, "c's keys resumed", map[string]int{"c1": 2, "c2": 2, "d1": 3})

	f.add("n2", "1") // "" is back at its own virtual time, 1, above the clock
	f.tenantsAhead(in, "n2 added", map[string]int{"n2": 4, "d1": 3})

	ls := f.claimAll(2, "a1", "b1")
	// a and b are at 1 with nothing ready, c and d at 0.
	f.tenantsAhead(in, "a1 and b1 leased", map[string]int{"a1": 0, "b1": 0, "c1": 0, "c2": 0, "d1": 1, "n2": 2})
	f.addP("b2", store.AddParams{Tenant: "b"}, "1") // back at 1, behind "" by name
	f.tenantsAhead(in, "b2 added", map[string]int{"b2": 3, "n2": 2})
	for _, l := range append(ls, n1) {
		f.ack(l, false)
	}
}

// testTenantsAheadBound: TenantsAhead counts up to store.MaxAhead.
func testTenantsAheadBound(f *fixture) {
	f.fairTenants()
	in := f.inspector()
	const workers = 4
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i <= store.MaxAhead; i += workers {
				p := store.AddParams{Tenant: fmt.Sprintf("t%05d", i)}
				if err := f.s.Add(f.ctx, f.q, fmt.Sprintf("k%05d", i), bytesOf([]string{"1"}), p); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(f.t, err)
	}
	f.addP("last", store.AddParams{Tenant: "u"}, "1")
	require.Equal(f.t, store.MaxAhead, f.keyInfo(in, "last").TenantsAhead, "TenantsAhead of a key behind %d tenants", store.MaxAhead+1)
	require.Zero(f.t, f.keyInfo(in, "k00000").TenantsAhead, "TenantsAhead of the first tenant's key")
	require.Equal(f.t, 3, f.keyInfo(in, "k00003").TenantsAhead)
}
