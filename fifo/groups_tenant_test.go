package fifo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// fairGroups returns Groups whose keys' tenant is their part before "/".
func fairGroups(t *testing.T, maxBatch int, weight func(string) int) *Groups[string, int] {
	t.Helper()
	of := func(k string) string { return k[:strings.IndexByte(k, '/')] }
	g, err := NewFairGroups[string, int](GroupsConfig{MaxBatch: maxBatch}, Tenants[string]{Of: of, Weight: weight})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close(nil) })
	return g
}

// putKeys puts n keys of tenant, each with vals messages.
func putKeys(t *testing.T, g *Groups[string, int], tenant string, n, vals int) {
	t.Helper()
	msgs := make([]int, vals)
	for i := range n {
		require.NoError(t, g.Put(fmt.Sprintf("%s/%05d", tenant, i), msgs...))
	}
}

// tenantTurns leases and acks n times, and returns the keys in order.
func tenantTurns(t *testing.T, g *Groups[string, int], n int) []string {
	t.Helper()
	var keys []string
	for range n {
		l := mustLease(t, g)
		keys = append(keys, l.Key)
		g.Ack(l)
	}
	return keys
}

func TestFairGroupsSmallTenantNotBehindLarge(t *testing.T) {
	g := fairGroups(t, 0, nil)
	putKeys(t, g, "A", 10000, 1)
	putKeys(t, g, "B", 10, 1)
	var b []string
	for _, k := range tenantTurns(t, g, 20) {
		if strings.HasPrefix(k, "B/") {
			b = append(b, k)
		}
	}
	want := make([]string, 10)
	for i := range want {
		want[i] = fmt.Sprintf("B/%05d", i)
	}
	require.Equal(t, want, b, "B's keys, oldest first, within the first 20 turns")
	info, ok := g.Key("A/00015", 100)
	require.True(t, ok)
	require.Equal(t, 5, info.Ahead, "A's keys ahead of A/00015")
}

func TestFairGroupsWeights(t *testing.T) {
	g := fairGroups(t, 1, func(tn string) int { return map[string]int{"H": 3}[tn] })
	putKeys(t, g, "H", 8, 500)
	putKeys(t, g, "L", 8, 500)
	count := map[string]int{}
	for _, k := range tenantTurns(t, g, 4000) {
		count[k[:1]]++
	}
	require.InDelta(t, 3, float64(count["H"])/float64(count["L"]), 0.15, "%v", count)
}

func TestFairGroupsNoCreditForIdle(t *testing.T) {
	g := fairGroups(t, 0, nil)
	putKeys(t, g, "A", 60, 1)
	tenantTurns(t, g, 40)
	putKeys(t, g, "B", 10, 1)
	keys := tenantTurns(t, g, 20)
	for i, k := range keys {
		require.Equal(t, []string{"A", "B"}[(i+1)%2], k[:1], "turn %d of %v", i, keys)
	}
}

func TestFairGroupsKeyKeepsTenantAndRequeues(t *testing.T) {
	g := fairGroups(t, 1, nil)
	require.NoError(t, g.Put("A/1", 1, 2))
	require.NoError(t, g.Put("A/2", 1))
	require.NoError(t, g.Put("B/1", 1))
	l := mustLease(t, g)
	require.Equal(t, "A/1", l.Key)
	g.Retry(l, 0) // back at the tail of A's keys
	require.Equal(t, []string{"B/1", "A/2", "A/1", "A/1"}, tenantTurns(t, g, 4))

	_, err := NewFairGroups[string, int](GroupsConfig{}, Tenants[string]{})
	require.EqualError(t, err, "fifo: Tenants.Of is required")
}

// With PerKey > 1, a key that leased goes back in its tenant's ready
// order, and an entry it left behind when a lease ended takes no turn of
// its tenant: after A/1's first lease is acked, B/1 and A/1 alternate.
func TestFairGroupsPerKey(t *testing.T) {
	of := func(k string) string { return k[:strings.IndexByte(k, '/')] }
	g, err := NewFairGroups[string, int](GroupsConfig{MaxBatch: 1, PerKey: 2}, Tenants[string]{Of: of})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close(nil) })
	require.NoError(t, g.Put("A/1", 1, 2, 3, 4, 5))
	require.NoError(t, g.Put("B/1", 1, 2, 3, 4, 5))
	l := mustLease(t, g)
	require.Equal(t, "A/1", l.Key)
	require.True(t, g.Ack(l)) // A/1 leaves its entry behind for a new one
	info, ok := g.Key("A/1", 10)
	require.True(t, ok)
	require.Equal(t, KeyReady, info.State)
	require.Zero(t, info.Ahead, "the stale entry of A/1 is not counted")
	var keys []string
	for range 4 {
		keys = append(keys, mustLease(t, g).Key)
	}
	require.Equal(t, []string{"B/1", "A/1", "B/1", "A/1"}, keys, "the keys leased, none acked")
	require.Equal(t, 4, g.Stats().Leases, "both keys have PerKey leases out")
}

// tenantsAhead returns the TenantsAhead of key, which is ready, counted
// up to most.
func tenantsAhead(t *testing.T, g *Groups[string, int], key string, most int) int {
	t.Helper()
	info, ok := g.Key(key, most)
	require.True(t, ok)
	require.Equal(t, KeyReady, info.State, "key %s", key)
	return info.TenantsAhead
}

// TenantsAhead counts the other tenants with a ready key before the key's
// tenant in the turns: ties go to the smaller name, a tenant without a
// ready key is not counted until it has one again, the key's own tenant
// is not counted, and
// the count stops at the bound.
func TestFairGroupsTenantsAhead(t *testing.T) {
	g := fairGroups(t, 0, nil)
	for _, k := range []string{"A/1", "B/1", "B/2", "C/1"} {
		require.NoError(t, g.Put(k, 1))
	}
	require.Zero(t, tenantsAhead(t, g, "A/1", 10))
	require.Equal(t, 1, tenantsAhead(t, g, "B/1", 10), "A, first by name at the same virtual time")
	require.Equal(t, 1, tenantsAhead(t, g, "B/2", 10), "A: B's own key ahead is not a tenant")
	require.Equal(t, 2, tenantsAhead(t, g, "C/1", 10))
	require.Equal(t, 1, tenantsAhead(t, g, "C/1", 1), "bounded")

	require.Equal(t, []string{"A/1", "B/1"}, tenantTurns(t, g, 2)) // A and B at 1, C at 0
	require.Zero(t, tenantsAhead(t, g, "C/1", 10))
	require.Equal(t, 1, tenantsAhead(t, g, "B/2", 10), "C, at a lower virtual time; A has no ready key")
	require.NoError(t, g.Put("A/2", 1)) // back at its own virtual time, 1, above the clock's 0
	require.Equal(t, 1, tenantsAhead(t, g, "A/2", 10), "C")
	require.Equal(t, 2, tenantsAhead(t, g, "B/2", 10), "A, back at the same virtual time as B, and C")
}
