package redisstore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/store"
)

// TestMeasureKeyRateFunctions measures what a KeyRate that never defers
// (1 µs, burst 1) costs the functions, call by call in one server, as
// TestMeasurePerKeyFunctionsAgainstOld does: two queues of 5,000 values
// over 500 keys, MaxBatch 1, one claimed with the KeyRate and one
// without, as a Runner's workers take them: 8 leases claimed, then each
// acked by a FinishAndClaim of one more, a call of each queue in turn.
// The medians of the calls' times (SLOWLOG), which a call that the
// machine held up does not move, give each queue's time per value;
// PACER_BENCH_ROUNDS (5) rounds, each on new queues, print their ratio.
func TestMeasureKeyRateFunctions(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("set PACER_BENCH=1 to measure")
	}
	rounds := 5
	if n, err := strconv.Atoi(os.Getenv("PACER_BENCH_ROUNDS")); err == nil {
		rounds = n
	}
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr()})
	t.Cleanup(func() { c.Close() })
	s, err := New(ctx, c, Config{Prefix: "kr"})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	fns := [3]string{claimFn, finishFn, statsFn}
	v := &twoVersions{c: c, s: s, old: fns, new: fns}
	const values, keys = 5000, 500
	rates := []store.KeyRate{{}, {Interval: time.Microsecond, Burst: 1}}
	var ratios []float64
	for round := range rounds {
		names := []string{fmt.Sprint("plain", round), fmt.Sprint("rate", round)}
		for _, q := range names {
			for i := range values {
				require.NoError(t, s.Add(ctx, q, fmt.Sprintf("k%03d", i%keys), [][]byte{[]byte(fmt.Sprint(i))}, store.AddParams{}))
			}
			_, err := s.Stats(ctx, q)
			require.NoError(t, err)
		}
		done, out, started := map[string]int{}, map[string][]store.Lease{}, map[string]bool{}
		per := v.inTurns(t, "keyrate", values, names, [][3]string{fns, fns}, func(i int) bool {
			q, p := names[i], store.ClaimParams{Keys: 8, MaxBatch: 1, TTL: time.Minute, KeyRate: rates[i]}
			if !started[q] {
				started[q] = true
				ls, _, err := s.Claim(ctx, q, p)
				require.NoError(t, err)
				out[q] = ls
				return true
			}
			if len(out[q]) == 0 {
				return false
			}
			l := out[q][0]
			out[q] = out[q][1:]
			done[q] += len(l.Values)
			p.Keys = 1
			_, ls, _, err := s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Ack}, p)
			require.NoError(t, err)
			out[q] = append(out[q], ls...)
			return true
		})
		for _, q := range names {
			require.Equal(t, values, done[q], q)
		}
		ratio := per[names[1]] / per[names[0]]
		ratios = append(ratios, ratio)
		fmt.Printf("keyrate round %d by medians, µs a value: with the KeyRate %.2f, without %.2f: %.3fx\n", round, per[names[1]], per[names[0]], ratio)
	}
	slices.Sort(ratios)
	fmt.Printf("keyrate: with the KeyRate / without, µs a value: %.3f-%.3f, median %.3f\n", ratios[0], ratios[len(ratios)-1], ratios[len(ratios)/2])
}
