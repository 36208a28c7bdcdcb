package redisstore

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestMeasureTenantFunctionsAgainstOld compares this package's functions
// with those of another version (the lua/ directory PACER_BENCH_OLD_LUA
// names) in one server, call by call, so that the machine's other work
// weighs on both alike: four queues of 10,000 values over 500 keys, old
// and new, without tenants and with 50, claimed 8 keys a Claim in strict
// order and acked one by one, a Claim of each queue in turn. The server
// logs every call's time (SLOWLOG); the mean of the middle half of each
// function's calls (see perValue), which a call that the machine held up
// does not move, gives each queue's time per value. It swaps the package's function names, so it runs alone.
func TestMeasureTenantFunctionsAgainstOld(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("set PACER_BENCH=1 to measure")
	}
	v := againstOld(t, "ab")
	ctx, s := context.Background(), v.s
	newFns, oldFns, use := v.new, v.old, v.use
	const values, keys = 10000, 500
	qs := []struct {
		name    string
		fns     [3]string
		tenants int
	}{{"oldplain", oldFns, 0}, {"oldten", oldFns, 50}, {"newplain", newFns, 0}, {"newten", newFns, 50}}
	for _, q := range qs {
		use(q.fns)
		for i := range values {
			p := store.AddParams{}
			if q.tenants > 0 {
				p.Tenant = fmt.Sprint("t", i%keys%q.tenants)
			}
			require.NoError(t, s.Add(ctx, q.name, fmt.Sprint(i%keys), [][]byte{[]byte(fmt.Sprint(i))}, p))
		}
		_, err := s.Stats(ctx, q.name)
		require.NoError(t, err)
	}
	names, fns := make([]string, len(qs)), make([][3]string, len(qs))
	for i, q := range qs {
		names[i], fns[i] = q.name, q.fns
	}
	done := map[string]int{}
	per := v.inTurns(t, "ab", values, names, fns, func(i int) bool {
		q := qs[i]
		if done[q.name] == values {
			return false
		}
		ls, _, err := s.Claim(ctx, q.name, store.ClaimParams{Keys: 8, MaxBatch: 1, TTL: time.Minute})
		require.NoError(t, err)
		for _, l := range ls {
			done[q.name] += len(l.Values)
			_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
			require.NoError(t, err)
		}
		return true
	})
	fmt.Printf("ab by middle halves, µs a value: old %.1f with tenants vs %.1f (%.3fx), new %.1f vs %.1f (%.3fx); new/old with tenants %.3fx\n",
		per["oldten"], per["oldplain"], per["oldten"]/per["oldplain"], per["newten"], per["newplain"], per["newten"]/per["newplain"], per["newten"]/per["oldten"])
}
