package redisstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestPerKeyAgainstOld checks that keys in multi mode (PerKey > 1) stay
// readable across versions, as during a rolling upgrade: one queue served
// by this package's functions alone, and one served by them and another
// version's (the lua/ directory PACER_BENCH_OLD_LUA names) in turn, call
// by call, take the same Adds and the same calls, and must lease the same
// batches (key, fence, attempt, values) in the same order and report the
// same Finish results. The calls: Claims of 1 to 4 keys with PerKey 2,
// leases left out so that keys have two at once, acked, retried or
// deferred, oldest first: by Finish, and again by FinishAndClaim of one
// key more, whose lease check reads the key's multi state (as a
// Runner's does). It swaps the package's function
// names, so it runs alone.
func TestPerKeyAgainstOld(t *testing.T) {
	v := againstOld(t, "pko")
	ctx, s := context.Background(), v.s
	newFns, oldFns, use := v.new, v.old, v.use
	p := store.ClaimParams{MaxBatch: 2, PerKey: 2, TTL: time.Minute}
	run := func(q string, mixed, withClaim bool) []string {
		call := 0
		pick := func() {
			call++
			if mixed && call%2 == 0 {
				use(oldFns)
			} else {
				use(newFns)
			}
		}
		const keys, values = 23, 9
		for i := range keys * values {
			require.NoError(t, s.Add(ctx, q, fmt.Sprint("k", i%keys), [][]byte{[]byte(fmt.Sprint(i))}, store.AddParams{}))
		}
		var log []string
		var out []store.Lease
		for step := 0; ; step++ {
			pick()
			cp := p
			cp.Keys = step%4 + 1
			ls, _, err := s.Claim(ctx, q, cp)
			require.NoError(t, err)
			for _, l := range ls {
				log = append(log, fmt.Sprintf("lease %s %d %d %q", l.Key, l.Fence, l.Attempt, l.Values))
			}
			out = append(out, ls...)
			if len(out) == 0 {
				break
			}
			for range step%3 + 1 {
				if len(out) == 0 {
					break
				}
				l := out[0]
				out = out[1:]
				o := store.Outcome{Kind: store.Ack}
				switch {
				case (step+int(l.Fence))%7 == 0:
					o = store.Outcome{Kind: store.Retry, Err: "again"}
				case (step+int(l.Fence))%11 == 0:
					o = store.Outcome{Kind: store.Defer}
				}
				pick()
				var more bool
				var got []store.Lease
				if withClaim {
					cp := p
					cp.Keys = 1
					more, got, _, err = s.FinishAndClaim(ctx, l, o, cp)
				} else {
					more, err = s.Finish(ctx, l, o)
				}
				require.NoError(t, err)
				log = append(log, fmt.Sprintf("finish %s %d %d %v", l.Key, l.Fence, o.Kind, more))
				for _, l := range got {
					log = append(log, fmt.Sprintf("lease %s %d %d %q", l.Key, l.Fence, l.Attempt, l.Values))
				}
				out = append(out, got...)
			}
		}
		pick()
		st, err := s.Stats(ctx, q)
		require.NoError(t, err)
		require.Zero(t, st.Values)
		return log
	}
	for _, withClaim := range []bool{false, true} {
		q := fmt.Sprint(withClaim)
		ref, mix := run("ref"+q, false, withClaim), run("mix"+q, true, withClaim)
		require.Greater(t, len(ref), 23*9/2)
		require.Equal(t, ref, mix, "with FinishAndClaim: %v", withClaim)
	}
}
