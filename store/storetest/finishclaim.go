package storetest

import (
	"errors"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testFinishAndClaim: FinishAndClaim ends a lease exactly as Finish does,
// then claims exactly as a Claim made right after: the key it left with
// values goes behind the keys already waiting. A lease that no longer
// holds is refused, and then nothing is claimed. Skipped for engines
// without store.FinishClaimer.
func testFinishAndClaim(f *fixture) {
	fc, ok := f.s.(store.FinishClaimer)
	if !ok {
		f.t.Skip("the engine does not implement store.FinishClaimer")
	}
	strict := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl}
	three := store.ClaimParams{Keys: 3, MaxBatch: 1, TTL: ttl}

	f.add("a", "a1", "a2")
	f.add("b", "b1")
	a := f.claimOne(strict)
	f.values(a, "a", "a1")
	f.add("c", "c1")
	more, ls, next, err := fc.FinishAndClaim(f.ctx, a, store.Outcome{Kind: store.Ack}, three)
	require.NoError(f.t, err)
	require.True(f.t, more, "a has a2 left")
	require.Equal(f.t, []string{"b", "c", "a"}, keysOf(ls), "a ran: it goes behind b and c")
	f.values(ls[0], "b", "b1")
	f.values(ls[1], "c", "c1")
	f.values(ls[2], "a", "a2")
	require.Equal(f.t, 1, ls[2].Attempt, "the next batch of a starts at attempt 1")
	require.Greater(f.t, ls[2].Fence, a.Fence)
	require.Positive(f.t, next, "nothing else is ready")

	// The ended lease again: refused, nothing changes, nothing is claimed.
	f.add("d", "d1")
	_, ls2, _, err := fc.FinishAndClaim(f.ctx, a, store.Outcome{Kind: store.Ack}, three)
	require.True(f.t, errors.Is(err, store.ErrLeaseLost), "FinishAndClaim of an ended lease: %v", err)
	require.Empty(f.t, ls2)
	require.Equal(f.t, 4, f.stats().Values, "a2, b1, c1 and d1 are stored")

	// A retry keeps the batch, which is not ready before its delay: the
	// claim takes d, and b is not leased again.
	more, ls, _, err = fc.FinishAndClaim(f.ctx, ls[0], store.Outcome{Kind: store.Retry, After: ttl}, three)
	require.NoError(f.t, err)
	require.True(f.t, more, "Finish's more is true after a Retry")
	require.Equal(f.t, []string{"d"}, keysOf(ls))
	f.values(ls[0], "d", "d1")
	st := f.stats()
	require.Equal(f.t, 1, st.Retrying)
	require.Equal(f.t, 3, st.Leased, "c, a and d")

	// The last value of a key: more is false, and nothing is ready.
	more, ls, next, err = fc.FinishAndClaim(f.ctx, ls[0], store.Outcome{Kind: store.Ack}, strict)
	require.NoError(f.t, err)
	require.False(f.t, more)
	require.Empty(f.t, ls)
	require.Positive(f.t, next)
}
