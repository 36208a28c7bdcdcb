package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
)

// Key's Ahead, which walks the schedule up to the key, counts what a
// visit of every key counts: the keys ready at now whose entry comes
// before the key's, while keys are added to, leased several at once
// (PerKey), lapse, retry, defer, hold, release, pause and resume at
// random; with tenants, Ahead counts the keys of the key's own tenant
// alone, and TenantsAhead what a visit of every key counts: the other
// tenants with a key ready and not paused, before the key's tenant in the
// order of the turns.
func TestMemoryAheadWalk(t *testing.T) {
	t.Run("NoTenants", func(t *testing.T) { testMemoryAheadWalk(t, 0) })
	t.Run("Tenants", func(t *testing.T) { testMemoryAheadWalk(t, 3) })
}

// testMemoryAheadWalk is TestMemoryAheadWalk with tenants tenants (0:
// none), each key's tenant fixed by its name.
func testMemoryAheadWalk(t *testing.T, tenants int) {
	ctx := t.Context()
	r := rand.New(rand.NewPCG(5, 6))
	clk := clock.NewMock()
	m := NewMemory(MemoryConfig{Clock: clk})
	var leases []Lease
	names := make([]string, 30)
	for i := range names {
		names[i] = fmt.Sprint("k", i)
	}
	checked, tenantsSeen := 0, 0
	for step := range 3000 {
		i := r.IntN(len(names))
		name := names[i]
		switch op := r.IntN(10); {
		case op < 3:
			var p AddParams
			if tenants > 0 {
				p.Tenant = fmt.Sprint("t", i%tenants)
			}
			require.NoError(t, m.Add(ctx, "q", name, [][]byte{[]byte("v")}, p))
		case op < 5:
			ls, _, err := m.Claim(ctx, "q", ClaimParams{Keys: 1 + r.IntN(3), MaxBatch: 1 + r.IntN(2), TTL: time.Duration(1+r.IntN(5)) * time.Second, PerKey: r.IntN(4)})
			require.NoError(t, err)
			leases = append(leases, ls...)
		case op < 7 && len(leases) > 0:
			i := r.IntN(len(leases))
			o := Outcome{Kind: []OutcomeKind{Ack, Retry, Defer, Hold}[r.IntN(4)], After: time.Duration(r.IntN(3)) * time.Second}
			_, err := m.Finish(ctx, leases[i], o)
			if err != ErrLeaseLost {
				require.NoError(t, err)
			}
			leases = append(leases[:i], leases[i+1:]...)
		case op == 7:
			_, err := m.Release(ctx, "q", name)
			require.NoError(t, err)
		case op == 8:
			var err error
			if r.IntN(2) == 0 {
				_, err = m.PauseKey(ctx, "q", name)
			} else {
				_, err = m.ResumeKey(ctx, "q", name)
			}
			require.NoError(t, err)
		default:
			clk.Add(time.Duration(r.IntN(1500)) * time.Millisecond)
		}
		for _, name := range names {
			info, ok, err := m.Key(ctx, "q", name)
			require.NoError(t, err)
			if !ok || info.State != Ready || info.Paused {
				continue
			}
			q := m.queues["q"]
			require.Equal(t, aheadOfEveryKey(q, q.keys[name], m.nano.Now()), info.Ahead, "step %d, key %s", step, name)
			require.Equal(t, tenantsAheadOfEveryKey(q, q.keys[name], m.nano.Now()), info.TenantsAhead, "step %d, key %s", step, name)
			if tenants > 0 && info.TenantsAhead > 0 {
				tenantsSeen++
			}
			checked++
		}
	}
	require.Greater(t, checked, 1000, "ready keys checked")
	if tenants > 0 {
		require.Greater(t, tenantsSeen, 100, "ready keys checked with other tenants ahead")
	}
}

// aheadOfEveryKey counts Ahead by visiting every key of q: those of k's
// tenant alone, if q has tenants.
func aheadOfEveryKey(q *queue, k *key, now int64) int {
	n := 0
	for _, o := range q.keys {
		if o == k || q.keyPaused(o.name) {
			continue
		}
		if o.settle(now); !o.isReady(now) {
			continue
		}
		if q.fair != nil && q.tenantOf(o) != q.tenantOf(k) {
			continue
		}
		if o.at < k.at || (o.at == k.at && o.order < k.order) {
			n++
		}
	}
	return min(n, MaxAhead)
}

// tenantsAheadOfEveryKey counts TenantsAhead by visiting every key of q,
// after Key moved the keys that came due into their tenants' turns: the
// tenants but k's with a key ready at now and not paused, whose virtual
// time, or name at the same time, is lower than k's tenant's.
func tenantsAheadOfEveryKey(q *queue, k *key, now int64) int {
	if q.fair == nil {
		return 0
	}
	own := q.tenantOf(k)
	ahead := map[*tenant]bool{}
	for _, o := range q.keys {
		t := q.tenantOf(o)
		if t == own || q.keyPaused(o.name) {
			continue
		}
		if o.settle(now); !o.isReady(now) {
			continue
		}
		if t.vtime < own.vtime || (t.vtime == own.vtime && t.name < own.name) {
			ahead[t] = true
		}
	}
	return min(len(ahead), MaxAhead)
}
