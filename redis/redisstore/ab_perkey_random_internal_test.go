package redisstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestPerKeyRandomAgainstOld runs random sequences of Adds, Claims,
// Finishes, FinishAndClaims (whose lease check reads the multi state, as
// a Runner's does), Releases and pauses of keys, with PerKey 0 to 3, on
// two queues: one served by this package's claim, finish and stats
// functions, one by another version's (the lua/ directory
// PACER_BENCH_OLD_LUA names). Both must lease the same batches (key,
// fence, attempt, values), report the same Finish results, Stats and
// Key: the steps of this version that work on a key's packed state
// directly (m_lease_one, m_finish_one) leave what the general ones do.
// It swaps the package's function names, so it runs alone.
func TestPerKeyRandomAgainstOld(t *testing.T) {
	v := againstOld(t, "pkr")
	ctx, s := context.Background(), v.s
	keys := []string{"a", "b", "c", "d", ""}
	for seed := range uint64(24) {
		rng := rand.New(rand.NewPCG(seed, 13))
		qs := [2]string{fmt.Sprint("new", seed), fmt.Sprint("old", seed)}
		fns := [2][3]string{v.new, v.old}
		type pair [2]store.Lease
		var out []pair
		claimParams := func() store.ClaimParams {
			return store.ClaimParams{Keys: 1 + rng.IntN(2), MaxBatch: rng.IntN(4), PerKey: rng.IntN(4), TTL: time.Hour}
		}
		after := func() time.Duration {
			if rng.IntN(3) == 0 {
				return store.Never
			}
			return 0
		}
		leased := func(msg string, ls [2][]store.Lease) {
			require.Equal(t, len(ls[0]), len(ls[1]), msg)
			for i := range ls[0] {
				a, b := ls[0][i], ls[1][i]
				require.Equal(t, [4]any{a.Key, a.Fence, a.Attempt, a.Values}, [4]any{b.Key, b.Fence, b.Attempt, b.Values}, msg)
				out = append(out, pair{a, b})
			}
		}
		for step := range 300 {
			msg := fmt.Sprintf("seed %d step %d", seed, step)
			switch op := rng.IntN(12); {
			case op < 4:
				key := keys[rng.IntN(len(keys))]
				var vals [][]byte
				for i := range 1 + rng.IntN(4) {
					vals = append(vals, fmt.Appendf(nil, "%d.%d", step, i))
				}
				p := store.AddParams{}
				if rng.IntN(5) == 0 {
					p.Wait = store.Never
				}
				msg += fmt.Sprintf(": Add(%q, %d, %+v)", key, len(vals), p)
				for i := range 2 {
					require.NoError(t, s.Add(ctx, qs[i], key, vals, p), msg)
				}
			case op < 6:
				p := claimParams()
				msg += fmt.Sprintf(": Claim(%+v)", p)
				var ls [2][]store.Lease
				for i := range 2 {
					v.use(fns[i])
					var err error
					ls[i], _, err = s.Claim(ctx, qs[i], p)
					require.NoError(t, err, msg)
				}
				leased(msg, ls)
			case op < 10 && len(out) > 0:
				j := rng.IntN(len(out))
				h := out[j]
				if rng.IntN(8) > 0 {
					out = append(out[:j], out[j+1:]...) // else finished twice
				}
				o := store.Outcome{Kind: store.OutcomeKind(1 + rng.IntN(5)), After: after(), Err: msg}
				if rng.IntN(5) > 0 {
					o.Kind = store.Ack // the Runner's most common call
				}
				withClaim := rng.IntN(3) > 0
				p := claimParams()
				msg += fmt.Sprintf(": Finish(%q f%d, %+v, claim %v %+v)", h[0].Key, h[0].Fence, o, withClaim, p)
				var more [2]bool
				var errs [2]error
				var ls [2][]store.Lease
				for i := range 2 {
					v.use(fns[i])
					if withClaim {
						more[i], ls[i], _, errs[i] = s.FinishAndClaim(ctx, h[i], o, p)
					} else {
						more[i], errs[i] = s.Finish(ctx, h[i], o)
					}
				}
				require.Equal(t, errs[0], errs[1], msg)
				require.Equal(t, more[0], more[1], msg)
				leased(msg, ls)
			case op < 11:
				key := keys[rng.IntN(len(keys))]
				msg += fmt.Sprintf(": Release(%q)", key)
				var ok [2]bool
				for i := range 2 {
					var err error
					ok[i], err = s.Release(ctx, qs[i], key)
					require.NoError(t, err, msg)
				}
				require.Equal(t, ok[0], ok[1], msg)
			default:
				key := keys[rng.IntN(len(keys))]
				pause := rng.IntN(2) == 0
				msg += fmt.Sprintf(": pause %q %v", key, pause)
				for i := range 2 {
					var err error
					if pause {
						_, err = s.PauseKey(ctx, qs[i], key)
					} else {
						_, err = s.ResumeKey(ctx, qs[i], key)
					}
					require.NoError(t, err, msg)
				}
			}
			var st [2]store.Stats
			for i := range 2 {
				v.use(fns[i])
				var err error
				st[i], err = s.Stats(ctx, qs[i])
				require.NoError(t, err, msg)
			}
			require.Equal(t, st[0], st[1], msg+": Stats")
			for _, key := range keys {
				var ki [2]store.KeyInfo
				var ok [2]bool
				for i := range 2 {
					var err error
					ki[i], ok[i], err = s.Key(ctx, qs[i], key)
					require.NoError(t, err, msg)
				}
				require.Equal(t, ok[0], ok[1], msg+": Key(%q)", key)
				a, b := ki[0], ki[1]
				require.Equal(t, [5]any{a.State, a.Leases, a.Attempt, a.Values, a.Err}, [5]any{b.State, b.Leases, b.Attempt, b.Values, b.Err}, msg+": Key(%q)", key)
			}
		}
		v.use(v.new)
	}
}
