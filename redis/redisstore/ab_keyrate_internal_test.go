package redisstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestKeyRateBesideOld: during an upgrade, instances of another version
// (the lua/ directory PACER_BENCH_OLD_LUA names) serve a queue beside this
// one's: they finish the leases that a Claim with a KeyRate took, keep T
// in the hash of a key that keeps values, lease a key deferred for its
// token once it is due, as any deferred key. A key that one of them
// empties keeps its T in rates if that version knows KeyRate, and finds
// its bucket as T left it; a version before KeyRate drops T with the
// hash, and the key finds its bucket full.
// It swaps the package's function names, so it runs alone.
func TestKeyRateBesideOld(t *testing.T) {
	v := againstOld(t, "kro")
	ctx, s, q := context.Background(), v.s, "q"
	p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute, KeyRate: store.KeyRate{Interval: time.Hour}}
	claim := func(fns [3]string, p store.ClaimParams) []store.Lease {
		v.use(fns)
		ls, _, err := s.Claim(ctx, q, p)
		require.NoError(t, err)
		return ls
	}
	finish := func(fns [3]string, l store.Lease) {
		v.use(fns)
		_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
		require.NoError(t, err)
	}
	require.NoError(t, s.Add(ctx, q, "a", [][]byte{[]byte("1"), []byte("2"), []byte("3")}, store.AddParams{}))
	ls := claim(v.new, p)
	require.Len(t, ls, 1)
	finish(v.old, ls[0])
	require.Empty(t, claim(v.new, p), "T stayed in a's hash")
	ki, _, err := s.Key(ctx, q, "a")
	require.NoError(t, err)
	require.Equal(t, store.Deferred, ki.State)

	// Its token due, an instance of the other version leases it.
	require.NoError(t, v.c.ZAdd(ctx, "{kro:q}:delayed", redis.Z{Score: 0, Member: "a"}).Err())
	off := p
	off.KeyRate = store.KeyRate{}
	ls = claim(v.old, off)
	require.Len(t, ls, 1)
	require.Equal(t, 1, ls[0].Attempt)
	finish(v.old, ls[0])
	ls = claim(v.old, off)
	require.Len(t, ls, 1)
	finish(v.old, ls[0])

	// a emptied by the other version.
	kept, err := v.c.ZScore(ctx, "{kro:q}:rates", "a").Result()
	if oldKnowsKeyRate(t) {
		require.NoError(t, err, "T went with a's hash")
		require.Greater(t, kept, float64(0))
	} else {
		require.ErrorIs(t, err, redis.Nil, "a version before KeyRate wrote rates")
	}
	require.NoError(t, s.Add(ctx, q, "a", [][]byte{[]byte("4")}, store.AddParams{}))
	if oldKnowsKeyRate(t) {
		require.Empty(t, claim(v.new, p), "a's bucket refilled when its hash went")
	} else {
		require.Len(t, claim(v.new, p), 1)
	}
}

// oldKnowsKeyRate tells whether the other version's library keeps T in
// rates when it deletes a key's hash: the versions since KeyRate do.
func oldKnowsKeyRate(t *testing.T) bool {
	lib, err := os.ReadFile(filepath.Join(os.Getenv("PACER_BENCH_OLD_LUA"), "lib.lua"))
	require.NoError(t, err)
	return bytes.Contains(lib, []byte("K_RATES"))
}
