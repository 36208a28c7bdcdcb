package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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

// TestTenantTurnsAgainstOld checks that this package's functions leave
// a queue's turns, weights and tenants' virtual times exactly as another
// version's (PACER_BENCH_OLD_LUA) do after the same calls, while they
// keep turns and weights in Redis's skiplist and hash table encodings
// (unlist), and no member of their own in either: 40 tenants of weights
// 1 to 3, Claims of 1 to 12 keys, the last of them emptying tenants'
// sets; and that the older version serves a queue so encoded as it
// serves its own.
func TestTenantTurnsAgainstOld(t *testing.T) {
	v := againstOld(t, "turns")
	ctx, s, c := context.Background(), v.s, v.c
	newFns, oldFns, use := v.new, v.old, v.use
	type state struct {
		turns         []redis.Z
		weights, vts  map[string]string
		order         []string
		turnsEncoding string
	}
	read := func(q string) state {
		p := "{turns:" + q + "}:"
		z, err := c.ZRangeWithScores(ctx, p+"turns", 0, -1).Result()
		require.NoError(t, err)
		w, err := c.HGetAll(ctx, p+"tweights").Result()
		require.NoError(t, err)
		tv, err := c.HGetAll(ctx, p+"tvtimes").Result()
		require.NoError(t, err)
		return state{turns: z, weights: w, vts: tv, turnsEncoding: c.ObjectEncoding(ctx, p+"turns").Val()}
	}
	// run serves q with fns until it has no values, and returns its
	// state after each Claim of several keys.
	run := func(q string, fns ...[3]string) []state {
		const tenants, keys, values = 40, 160, 3
		use(fns[0])
		for i := range keys * values {
			k := i % keys
			p := store.AddParams{Tenant: fmt.Sprint("t", k%tenants), Weight: k%tenants%3 + 1}
			require.NoError(t, s.Add(ctx, q, fmt.Sprint("k", k), [][]byte{[]byte(fmt.Sprint(i))}, p))
		}
		var states []state
		for step := 0; ; step++ {
			use(fns[step%len(fns)])
			ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: step%12 + 1, MaxBatch: 1, TTL: time.Minute})
			require.NoError(t, err)
			if len(ls) == 0 {
				break
			}
			st := read(q)
			for _, l := range ls {
				st.order = append(st.order, l.Key)
				_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
				require.NoError(t, err)
			}
			states = append(states, st)
		}
		return states
	}
	o, n := run("old", oldFns), run("new", newFns)
	require.Greater(t, len(n), 60)
	require.Len(t, n, len(o))
	unlisted := 0
	for i := range o {
		if n[i].turnsEncoding == "skiplist" && o[i].turnsEncoding != "skiplist" {
			unlisted++
		}
		o[i].turnsEncoding, n[i].turnsEncoding = "", ""
		require.Equal(t, o[i], n[i], "after Claim %d", i)
	}
	require.Greater(t, unlisted, len(n)/2, "turns kept in a skiplist")
	w := c.ObjectEncoding(ctx, "{turns:new}:tweights").Val()
	require.Equal(t, "hashtable", w)
	m := run("mix", newFns, oldFns)
	for i := range o {
		m[i].turnsEncoding = ""
	}
	require.Equal(t, o, m, "both versions in turn")
}
