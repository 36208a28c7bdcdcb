package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestTenantOrderAgainstOld checks that this package's functions serve
// tenants' turns in exactly the order of another version's (the lua/
// directory PACER_BENCH_OLD_LUA names), on two queues with the same Adds:
// tenants of weights 1 to 4, ties on virtual time in every round, Claims
// of 1 to 9 keys, some keys acked, some retried; and in the same order
// when both versions serve one queue, call by call in turn, as during a
// rolling upgrade. It swaps the package's function names, so it runs
// alone.
func TestTenantOrderAgainstOld(t *testing.T) {
	v := againstOld(t, "ord")
	ctx, s := context.Background(), v.s
	newFns, oldFns, use := v.new, v.old, v.use
	// run serves queue q with fns, or with mix's functions in turn, one
	// call each.
	run := func(q string, fns [3]string, mix ...[3]string) []string {
		use(fns)
		call := 0
		pick := func() {
			if len(mix) > 0 {
				use(mix[call%len(mix)])
				call++
			}
		}
		const tenants, keys, values = 13, 120, 6
		for i := range keys * values {
			k := i % keys
			p := store.AddParams{Tenant: fmt.Sprint("t", k%tenants), Weight: k%tenants%4 + 1}
			if k%17 == 0 {
				p = store.AddParams{} // some keys without a tenant
			}
			require.NoError(t, s.Add(ctx, q, fmt.Sprint("k", k), [][]byte{[]byte(fmt.Sprint(i))}, p))
		}
		var order []string
		for step := 0; ; step++ {
			pick()
			ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: step%9 + 1, MaxBatch: 1, TTL: time.Minute})
			require.NoError(t, err)
			if len(ls) == 0 {
				break
			}
			for i, l := range ls {
				order = append(order, l.Key)
				o := store.Outcome{Kind: store.Ack}
				if (step+i)%7 == 0 {
					o = store.Outcome{Kind: store.Retry}
				}
				pick()
				_, err := s.Finish(ctx, l, o)
				require.NoError(t, err)
			}
		}
		return order
	}
	o, n := run("old", oldFns), run("new", newFns)
	require.Greater(t, len(o), 720)
	require.Equal(t, o, n)
	require.Equal(t, n, run("mix", newFns, newFns, oldFns), "both versions in turn")
}
