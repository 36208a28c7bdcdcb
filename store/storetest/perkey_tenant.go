package storetest

import (
	"github.com/stretchr/testify/require"
)

// testPerKeyTenants: with PerKey 2, a key that leased and may lease again
// goes back in its own tenant's ready order, and each of its leases takes
// a turn of that tenant: one Claim of 4 leases the one key of tenant A
// (weight 3) and the one of tenant B (weight 1) in turns, twice each, as
// the key of A has 2 leases out then; and once those are acked, the key
// of A, readied again by each Finish, keeps A's weight: it takes 3 turns
// of 4 or more.
func testPerKeyTenants(f *fixture) {
	f.fairTenants()
	p := f.perKey(2, 4)
	f.tenantKeys("A", 3, 1, 20, 1)
	f.tenantKeys("B", 1, 1, 20, 1)
	a, b := "A00000", "B00000"
	ls, _ := f.claim(p)
	require.Equal(f.t, []string{a, b, a, b}, keysOf(ls), "the leases of one Claim")
	f.none()
	for _, l := range ls {
		f.ack(l, true)
	}
	p.Keys = 1
	got := keysOf(f.turns(12, p))
	n := 0
	for _, k := range got {
		if k == a {
			n++
		}
	}
	require.GreaterOrEqual(f.t, n, 9, "the turns of A, of weight 3, among 12 with B, of weight 1: %v", got)
	require.Less(f.t, n, 12, "B takes turns too: %v", got)
}
