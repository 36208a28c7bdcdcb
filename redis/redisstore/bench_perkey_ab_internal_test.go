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

// TestMeasurePerKeyFunctionsAgainstOld compares this package's functions
// with those of another version (the lua/ directory PACER_BENCH_OLD_LUA
// names) in one server, call by call, as
// TestMeasureTenantFunctionsAgainstOld does: four queues of 5,000 values
// over 500 keys, old and new, with PerKey 1 and 2 (MaxBatch 2 both), as
// a Runner's workers take them: 8 leases claimed, then each acked by a
// FinishAndClaim of one more, a call of each queue in turn. The mean of
// the middle half of the calls' times (SLOWLOG; see perValue), which a
// call that the machine held up does not move, gives each queue's time
// per value.
func TestMeasurePerKeyFunctionsAgainstOld(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("set PACER_BENCH=1 to measure")
	}
	v := againstOld(t, "pk")
	ctx, s := context.Background(), v.s
	newFns, oldFns, use := v.new, v.old, v.use
	const values, keys = 5000, 500
	qs := []struct {
		name   string
		fns    [3]string
		perKey int
	}{{"oldmb2", oldFns, 1}, {"oldpk2", oldFns, 2}, {"newmb2", newFns, 1}, {"newpk2", newFns, 2}}
	for _, q := range qs {
		use(q.fns)
		for i := range values {
			require.NoError(t, s.Add(ctx, q.name, fmt.Sprintf("k%03d", i%keys), [][]byte{[]byte(fmt.Sprint(i))}, store.AddParams{}))
		}
		_, err := s.Stats(ctx, q.name)
		require.NoError(t, err)
	}
	names, fns := make([]string, len(qs)), make([][3]string, len(qs))
	for i, q := range qs {
		names[i], fns[i] = q.name, q.fns
	}
	done := map[string]int{}
	out := map[string][]store.Lease{}
	started := map[string]bool{}
	per := v.inTurns(t, "pkab", values, names, fns, func(i int) bool {
		q := qs[i]
		if !started[q.name] { // the first round claims 8 keys of each
			started[q.name] = true
			ls, _, err := s.Claim(ctx, q.name, store.ClaimParams{Keys: 8, MaxBatch: 2, PerKey: q.perKey, TTL: time.Minute})
			require.NoError(t, err)
			out[q.name] = ls
			return true
		}
		if len(out[q.name]) == 0 {
			return false
		}
		l := out[q.name][0]
		out[q.name] = out[q.name][1:]
		done[q.name] += len(l.Values)
		_, ls, _, err := s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Ack},
			store.ClaimParams{Keys: 1, MaxBatch: 2, PerKey: q.perKey, TTL: time.Minute})
		require.NoError(t, err)
		out[q.name] = append(out[q.name], ls...)
		return true
	})
	for _, q := range qs {
		require.Equal(t, values, done[q.name], q.name)
	}
	fmt.Printf("pkab by middle halves, µs a value: old PerKey 2 %.2f vs PerKey 1 %.2f (%.3fx), new %.2f vs %.2f (%.3fx); new/old PerKey 2 %.3fx\n",
		per["oldpk2"], per["oldmb2"], per["oldpk2"]/per["oldmb2"], per["newpk2"], per["newmb2"], per["newpk2"]/per["newmb2"], per["newpk2"]/per["oldpk2"])
}
