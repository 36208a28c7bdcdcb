package redisstore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/store"
)

// TestTenantOrderAgainstOld checks that this package's functions serve
// tenants' turns in exactly the order of another version's (the lua/
// directory PACER_BENCH_OLD_LUA names), on two queues with the same Adds:
// tenants of weights 1 to 4, ties on virtual time in every round, Claims
// of 1 to 9 keys, some keys acked, some retried, some paused and resumed.
// It swaps the package's function names, so it runs alone.
func TestTenantOrderAgainstOld(t *testing.T) {
	dir := os.Getenv("PACER_BENCH_OLD_LUA")
	if dir == "" {
		t.Skip("set PACER_BENCH_OLD_LUA to another version's lua/ directory")
	}
	old := oldLibrary(t, dir)
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr()})
	defer c.Close()
	s, err := New(ctx, c, Config{Prefix: "ord"})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, old.Load(ctx, c))
	newFns := [3]string{claimFn, finishFn, statsFn}
	oldFns := [3]string{old.Function("claim"), old.Function("finish"), old.Function("stats")}
	use := func(f [3]string) { claimFn, finishFn, statsFn = f[0], f[1], f[2] }
	defer use(newFns)
	run := func(q string, fns [3]string) []string {
		use(fns)
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
				_, err := s.Finish(ctx, l, o)
				require.NoError(t, err)
			}
		}
		return order
	}
	o, n := run("old", oldFns), run("new", newFns)
	require.Greater(t, len(o), 720)
	require.Equal(t, o, n)
}
