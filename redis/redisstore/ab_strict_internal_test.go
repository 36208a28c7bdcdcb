package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestStrictBesideOld: during an upgrade, instances of another version
// (the lua/ directory PACER_BENCH_OLD_LUA names) serve a strict queue
// beside this one's, each finishing the leases the other took: a drop
// keeps the attempt of the lease in its dead letter, a retry's batch comes
// back as the next attempt, after its delay too (from delayed), and the
// values come in Add order. It swaps the package's function names, so it
// runs alone.
func TestStrictBesideOld(t *testing.T) {
	v := againstOld(t, "sbo")
	ctx, s, q := context.Background(), v.s, "q"
	p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute}
	claim := func(fns [3]string) store.Lease {
		v.use(fns)
		ls, _, err := s.Claim(ctx, q, p)
		require.NoError(t, err)
		require.Len(t, ls, 1)
		return ls[0]
	}
	// finish reports whether the key still has values.
	finish := func(fns [3]string, l store.Lease, o store.Outcome) bool {
		v.use(fns)
		more, err := s.Finish(ctx, l, o)
		require.NoError(t, err)
		return more
	}
	require.NoError(t, s.Add(ctx, q, "a", [][]byte{[]byte("1"), []byte("2"), []byte("3"), []byte("4")}, store.AddParams{}))
	for i, vs := range [][2][3]string{{v.old, v.new}, {v.new, v.old}} {
		// A drop of the second attempt, by the other version.
		l := claim(vs[0])
		require.True(t, finish(vs[1], l, store.Outcome{Kind: store.Retry, Err: "e"}))
		l = claim(vs[0])
		require.Equal(t, 2, l.Attempt)
		require.True(t, finish(vs[1], l, store.Outcome{Kind: store.Drop, Err: "dropped"}))
		// A retry with a delay, due once moved to now, then an ack.
		l = claim(vs[1])
		require.Equal(t, 1, l.Attempt)
		require.True(t, finish(vs[0], l, store.Outcome{Kind: store.Retry, After: time.Hour}))
		v.use(vs[0])
		ls, _, err := s.Claim(ctx, q, p)
		require.NoError(t, err)
		require.Empty(t, ls, "a waits for its retry")
		require.NoError(t, v.c.ZAdd(ctx, "{sbo:q}:delayed", redis.Z{Score: 0, Member: "a"}).Err())
		l = claim(vs[1])
		require.Equal(t, 2, l.Attempt)
		require.Equal(t, i == 0, finish(vs[0], l, store.Outcome{Kind: store.Ack}), "values left after the ack")
	}
	dls, err := s.DeadLetters(ctx, q, 0, 10)
	require.NoError(t, err)
	require.Len(t, dls, 2)
	for i, want := range []string{"1", "3"} {
		require.Equal(t, [][]byte{[]byte(want)}, dls[i].Values)
		require.Equal(t, 2, dls[i].Attempt)
		require.Equal(t, "dropped", dls[i].Err)
	}
	v.use(v.new)
	ls, _, err := s.Claim(ctx, q, p)
	require.NoError(t, err)
	require.Empty(t, ls)
	_, found, err := s.Key(ctx, q, "a")
	require.NoError(t, err)
	require.False(t, found, "a's values and hash are gone")
}
