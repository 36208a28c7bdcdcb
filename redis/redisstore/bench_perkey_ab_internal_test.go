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
// FinishAndClaim of one more, a call of each queue in turn. The medians
// of the calls' times (SLOWLOG), which a call that the machine held up
// does not move, give each queue's time per value.
func TestMeasurePerKeyFunctionsAgainstOld(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("set PACER_BENCH=1 to measure")
	}
	v := againstOld(t, "pk")
	ctx, c, s := context.Background(), v.c, v.s
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
	names := make([]string, len(qs))
	for i, q := range qs {
		names[i] = q.name
	}
	calls := recordCalls(t, c, names)
	collect := func() { calls.collect(t) }
	done := map[string]int{}
	out := map[string][]store.Lease{}
	for _, q := range qs {
		use(q.fns)
		ls, _, err := s.Claim(ctx, q.name, store.ClaimParams{Keys: 8, MaxBatch: 2, PerKey: q.perKey, TTL: time.Minute})
		require.NoError(t, err)
		out[q.name] = ls
	}
	for step := 0; ; step++ {
		active := 0
		for _, q := range qs {
			if len(out[q.name]) == 0 {
				continue
			}
			active++
			use(q.fns)
			l := out[q.name][0]
			out[q.name] = out[q.name][1:]
			done[q.name] += len(l.Values)
			_, ls, _, err := s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Ack},
				store.ClaimParams{Keys: 1, MaxBatch: 2, PerKey: q.perKey, TTL: time.Minute})
			require.NoError(t, err)
			out[q.name] = append(out[q.name], ls...)
		}
		if step%200 == 0 {
			collect()
		}
		if active == 0 {
			break
		}
	}
	collect()
	per := map[string]float64{}
	for _, q := range qs {
		require.Equal(t, values, done[q.name], q.name)
		per[q.name] = calls.perValue("pkab", q.name, values)
	}
	fmt.Printf("pkab by medians, µs a value: old PerKey 2 %.2f vs PerKey 1 %.2f (%.3fx), new %.2f vs %.2f (%.3fx); new/old PerKey 2 %.3fx\n",
		per["oldpk2"], per["oldmb2"], per["oldpk2"]/per["oldmb2"], per["newpk2"], per["newmb2"], per["newpk2"]/per["newmb2"], per["newpk2"]/per["oldpk2"])
}
