package redisstore

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestMeasureStrictFunctionsAgainstOld compares this package's functions
// with those of another version (the lua/ directory PACER_BENCH_OLD_LUA
// names) in one server, call by call, on the strict path: MaxBatch 1, no
// tenants, PerKey or KeyRate. Four queues, old and new, of 10,000 values
// over 500 keys and over 10,000 keys, each value added on its own and
// folded before the run, 8 leases claimed, then the 8 acked by one
// finish script that claims one more for each, as the combiner sends the
// FinishAndClaims of 8 workers, a call of each queue in turn. The medians of the calls' times (SLOWLOG), which a
// call that the machine held up does not move, give each queue's time per
// value. It swaps the package's function names, so it runs alone.
func TestMeasureStrictFunctionsAgainstOld(t *testing.T) {
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("set PACER_BENCH=1 to measure")
	}
	v := againstOld(t, "sab")
	ctx, s := context.Background(), v.s
	newFns, oldFns, use := v.new, v.old, v.use
	const values = 10000
	qs := []struct {
		name string
		fns  [3]string
		keys int
	}{{"old500", oldFns, 500}, {"olddistinct", oldFns, values}, {"new500", newFns, 500}, {"newdistinct", newFns, values}}
	for _, q := range qs {
		use(q.fns)
		for i := range values {
			require.NoError(t, s.Add(ctx, q.name, fmt.Sprintf("k%05d", i%q.keys), [][]byte{[]byte(fmt.Sprint(i))}, store.AddParams{}))
		}
		_, err := s.Stats(ctx, q.name)
		require.NoError(t, err)
	}
	names, fns := make([]string, len(qs)), make([][3]string, len(qs))
	for i, q := range qs {
		names[i], fns[i] = q.name, q.fns
	}
	p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute}
	done := map[string]int{}
	out := map[string][]store.Lease{}
	started := map[string]bool{}
	// The commands each queue's calls ran, from INFO commandstats around
	// each step (the INFO calls themselves left out).
	cmds := map[string]map[string]int64{}
	stats := func() map[string]int64 {
		info, err := v.c.Info(ctx, "commandstats").Result()
		require.NoError(t, err)
		m := map[string]int64{}
		for _, line := range strings.Split(info, "\n") {
			name, rest, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
			if !ok || name == "cmdstat_info" {
				continue
			}
			n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
			m[strings.TrimPrefix(name, "cmdstat_")] = n
		}
		return m
	}
	per := v.inTurns(t, "sab", values, names, fns, func(i int) bool {
		q := qs[i]
		before := stats()
		defer func() {
			if cmds[q.name] == nil {
				cmds[q.name] = map[string]int64{}
			}
			for c, n := range stats() {
				cmds[q.name][c] += n - before[c]
			}
		}()
		if !started[q.name] { // the first round claims 8 keys of each
			started[q.name] = true
			first := p
			first.Keys = 8
			ls, _, err := s.Claim(ctx, q.name, first)
			require.NoError(t, err)
			out[q.name] = ls
			return true
		}
		if len(out[q.name]) == 0 {
			return false
		}
		// One finish script for the 8, as the combiner sends the calls of
		// 8 workers that came while the one before was on its way.
		qq, err := s.queue(ctx, q.name)
		require.NoError(t, err)
		batch := make([]*finishCall, len(out[q.name]))
		for j, l := range out[q.name] {
			done[q.name] += len(l.Values)
			batch[j] = newFinishCall(ctx, l, store.Outcome{Kind: store.Ack}, p)
		}
		s.finishBatch(qq, batch)
		out[q.name] = nil
		for _, c := range batch {
			require.NoError(t, c.err)
			out[q.name] = append(out[q.name], c.leases...)
			c.free()
		}
		return true
	})
	for _, q := range qs {
		require.Equal(t, values, done[q.name], q.name)
	}
	for _, q := range qs {
		var all int64
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(cmds[q.name])) {
			if n := cmds[q.name][c]; n > 0 {
				all += n
				parts = append(parts, fmt.Sprintf("%s %.2f", c, float64(n)/values))
			}
		}
		fmt.Printf("sab %-11s commands a value %.2f: %s\n", q.name, float64(all)/values, strings.Join(parts, ", "))
	}
	fmt.Printf("sab by medians, µs a value: 500 keys old %.2f new %.2f (%.3fx); distinct keys old %.2f new %.2f (%.3fx)\n",
		per["old500"], per["new500"], per["new500"]/per["old500"], per["olddistinct"], per["newdistinct"], per["newdistinct"]/per["olddistinct"])
}
