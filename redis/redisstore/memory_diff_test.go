package redisstore_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestSameAsMemory runs random sequences of operations on the Store and on
// store.Memory, the reference engine, and requires the same answers: the
// same leases, outcomes, counts, refusals of a bound and dead letters. The sequences avoid
// deadlines that could pass during the test (delays and quiet periods are 0
// or for ever), so that the two clocks do not matter.
func TestSameAsMemory(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			r, _, _ := newStore(t)
			m := store.NewMemory(store.MemoryConfig{})
			sameAsMemory(t, rand.New(rand.NewPCG(seed, 9)), r, m, false)
		})
	}
}

// TestSameAsMemoryPerKey is TestSameAsMemory with claims that ask for
// ClaimParams.PerKey of 0 to 3, so that keys have several batches out
// and kept at once, and compares what Key shows of each key too.
func TestSameAsMemoryPerKey(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			r, _, _ := newStore(t)
			m := store.NewMemory(store.MemoryConfig{})
			sameAsMemory(t, rand.New(rand.NewPCG(seed, 11)), r, m, true)
		})
	}
}

// held is a lease out in both engines.
type held struct{ r, m store.Lease }

func sameAsMemory(t *testing.T, rng *rand.Rand, r, m store.Store, perKey bool) {
	ctx := t.Context()
	const q = "q"
	var out []held
	var maxFence uint64
	keys := []string{"a", "b", "c", "", "e\x00:f"}
	dur := func() time.Duration {
		if rng.IntN(3) == 0 {
			return time.Duration(1<<63 - 1)
		}
		return 0
	}
	class := func(d time.Duration) string {
		switch {
		case d == 0:
			return "now"
		case d == store.Never:
			return "never"
		}
		return "later"
	}
	for step := range 400 {
		msg := fmt.Sprintf("step %d", step)
		switch op := rng.IntN(10); {
		case op < 3:
			key := keys[rng.IntN(len(keys))]
			var vals [][]byte
			for i := range 1 + rng.IntN(3) {
				vals = append(vals, fmt.Appendf(nil, "%d.%d", step, i))
			}
			p := store.AddParams{Wait: dur()}
			if rng.IntN(2) == 0 {
				p.MaxValues = 5 + rng.IntN(15)
			}
			msg += fmt.Sprintf(": Add(%q, %q, %v)", key, vals, p)
			merr := m.Add(ctx, q, key, vals, p)
			if merr != nil {
				require.ErrorIs(t, merr, store.ErrFull, msg)
			}
			require.Equal(t, merr, r.Add(ctx, q, key, vals, p), msg)
		case op < 5:
			p := store.ClaimParams{Keys: 1 + rng.IntN(3), MaxBatch: rng.IntN(4), TTL: time.Hour}
			if perKey {
				// One key a Claim: the keys one Claim leases share its
				// instant, a tie that Memory breaks by the order it last
				// scheduled them and the Store by the order it leased them.
				p.Keys, p.PerKey = 1, rng.IntN(4)
			}
			msg += fmt.Sprintf(": Claim(%+v)", p)
			rl, rn, err := r.Claim(ctx, q, p)
			require.NoError(t, err, msg)
			ml, mn, err := m.Claim(ctx, q, p)
			require.NoError(t, err, msg)
			require.Equal(t, class(mn), class(rn), msg+": next")
			require.Equal(t, len(ml), len(rl), msg)
			for i := range ml {
				require.Equal(t, ml[i].Key, rl[i].Key, msg)
				require.Equal(t, ml[i].Values, rl[i].Values, msg)
				require.Equal(t, ml[i].Attempt, rl[i].Attempt, msg)
				if perKey {
					require.Greater(t, rl[i].Fence, maxFence, msg)
					maxFence = rl[i].Fence
				}
				out = append(out, held{rl[i], ml[i]})
				msg += fmt.Sprintf(" [%q %q a%d f%d]", rl[i].Key, rl[i].Values, rl[i].Attempt, rl[i].Fence)
			}
		case op < 8 && len(out) > 0:
			i := rng.IntN(len(out))
			h := out[i]
			if rng.IntN(8) > 0 {
				out = append(out[:i], out[i+1:]...) // else finished twice
			}
			o := store.Outcome{Kind: store.OutcomeKind(1 + rng.IntN(5)), After: dur(), Err: msg}
			msg += fmt.Sprintf(": Finish(%q, %+v)", h.m.Key, o)
			rm, rerr := r.Finish(ctx, h.r, o)
			mm, merr := m.Finish(ctx, h.m, o)
			require.Equal(t, merr, rerr, msg)
			require.Equal(t, mm, rm, msg)
		case op < 9:
			key := keys[rng.IntN(len(keys))]
			msg += fmt.Sprintf(": Release(%q)", key)
			rok, err := r.Release(ctx, q, key)
			require.NoError(t, err, msg)
			mok, err := m.Release(ctx, q, key)
			require.NoError(t, err, msg)
			require.Equal(t, mok, rok, msg)
		default:
			rd, err := r.(store.DeadLetters).DeadLetters(ctx, q, 0, 100)
			require.NoError(t, err, msg)
			md, err := m.(store.DeadLetters).DeadLetters(ctx, q, 0, 100)
			require.NoError(t, err, msg)
			require.Equal(t, len(md), len(rd), msg)
			for i := range md {
				require.Equal(t, md[i].ID, rd[i].ID, msg)
				require.Equal(t, md[i].Key, rd[i].Key, msg)
				require.Equal(t, md[i].Values, rd[i].Values, msg)
				require.Equal(t, md[i].Err, rd[i].Err, msg)
				require.Equal(t, md[i].Attempt, rd[i].Attempt, msg)
			}
			if len(md) > 0 && rng.IntN(2) == 0 {
				id := md[rng.IntN(len(md))].ID
				msg += fmt.Sprintf(": Redrive(%d)", id)
				rok, err := r.(store.DeadLetters).Redrive(ctx, q, id)
				require.NoError(t, err, msg)
				mok, err := m.(store.DeadLetters).Redrive(ctx, q, id)
				require.NoError(t, err, msg)
				require.Equal(t, mok, rok, msg)
			}
		}
		rs, err := r.Stats(ctx, q)
		require.NoError(t, err, msg)
		ms, err := m.Stats(ctx, q)
		require.NoError(t, err, msg)
		require.Equal(t, ms, rs, msg+": Stats")
		if perKey {
			for _, key := range keys {
				ri, rok, rerr := r.(store.Inspector).Key(ctx, q, key)
				mi, mok, merr := m.(store.Inspector).Key(ctx, q, key)
				require.Equal(t, merr, rerr, msg)
				require.Equal(t, mok, rok, msg+": Key(%q)", key)
				require.Equal(t, mi.State, ri.State, msg+": Key(%q)", key)
				require.Equal(t, mi.Leases, ri.Leases, msg+": Key(%q)", key)
				require.Equal(t, mi.Attempt, ri.Attempt, msg+": Key(%q)", key)
				require.Equal(t, mi.Values, ri.Values, msg+": Key(%q)", key)
				require.Equal(t, mi.Err, ri.Err, msg+": Key(%q)", key)
			}
		}
	}
}

// TestFoldSameAsMemory: many Adds, folded into their keys all at once
// (over several scripts, one of them an Add larger than a fold's share),
// give the same counts and leases as in store.Memory, where each Add is
// applied at once.
func TestFoldSameAsMemory(t *testing.T) {
	r, _, _ := newStore(t)
	m := store.NewMemory(store.MemoryConfig{})
	ctx := t.Context()
	const q = "q"
	rng := rand.New(rand.NewPCG(7, 9))
	keys := []string{"a", "b", "c", "", "e\x00:f", "g"}
	add := func(key string, vals [][]byte, p store.AddParams) {
		require.NoError(t, r.Add(ctx, q, key, vals, p))
		require.NoError(t, m.Add(ctx, q, key, vals, p))
	}
	for step := range 3000 {
		if step == 1500 {
			big := make([][]byte, 9000)
			for i := range big {
				big[i] = fmt.Appendf(nil, "big.%d", i)
			}
			add("b", big, store.AddParams{})
		}
		var vals [][]byte
		for i := range 1 + rng.IntN(3) {
			vals = append(vals, fmt.Appendf(nil, "%d.%d", step, i))
		}
		p := store.AddParams{}
		if rng.IntN(4) == 0 {
			p = store.AddParams{Wait: store.Never, MaxWait: store.Never}
		}
		add(keys[rng.IntN(len(keys))], vals, p)
	}
	rs, err := r.Stats(ctx, q)
	require.NoError(t, err)
	ms, err := m.Stats(ctx, q)
	require.NoError(t, err)
	require.Equal(t, ms, rs)
	p := store.ClaimParams{Keys: 2, MaxBatch: 500, TTL: time.Hour}
	for {
		rl, _, err := r.Claim(ctx, q, p)
		require.NoError(t, err)
		ml, _, err := m.Claim(ctx, q, p)
		require.NoError(t, err)
		require.Equal(t, len(ml), len(rl))
		if len(ml) == 0 {
			break
		}
		for i := range ml {
			require.Equal(t, ml[i].Key, rl[i].Key)
			require.Equal(t, ml[i].Values, rl[i].Values)
			_, err := r.Finish(ctx, rl[i], store.Outcome{Kind: store.Ack})
			require.NoError(t, err)
			_, err = m.Finish(ctx, ml[i], store.Outcome{Kind: store.Ack})
			require.NoError(t, err)
		}
	}
	rs, err = r.Stats(ctx, q)
	require.NoError(t, err)
	ms, err = m.Stats(ctx, q)
	require.NoError(t, err)
	require.Equal(t, ms, rs)
}
