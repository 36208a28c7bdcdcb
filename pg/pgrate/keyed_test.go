package pgrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgrate"
	"github.com/pacerkit/pacer/ratelimit"
)

// keyAllowN calls k.Allow(key) n times and returns how many were allowed.
func keyAllowN(t testing.TB, k *pgrate.Keyed, key string, n int) int {
	t.Helper()
	got := 0
	for range n {
		ok, err := k.Allow(context.Background(), key)
		require.NoError(t, err)
		if ok {
			got++
		}
	}
	return got
}

// TestKeyedIndependent: each key has its own bucket, shared by every
// Keyed with the same Name on any pool; a key's pause holds that key
// only; a Bucket of the same Name is another bucket.
func TestKeyedIndependent(t *testing.T) {
	t.Parallel()
	p1, p2 := connect(t), connect(t)
	schema := freshSchema(t, p1)
	cfg := pgrate.KeyedConfig{Rate: 0.1, Burst: 2, Name: "accounts", Schema: schema}
	a, b := newKeyed(t, p1, cfg), newKeyed(t, p2, cfg)
	require.Equal(t, 2, keyAllowN(t, a, "alice", 3))
	require.Zero(t, keyAllowN(t, b, "alice", 1), "another instance saw a fresh bucket for alice")
	require.Equal(t, 2, keyAllowN(t, b, "bob", 3), "bob paid for alice")
	require.Equal(t, 2, keyAllowN(t, a, "", 3), "the empty key is a key")
	require.Equal(t, 2, keyAllowN(t, a, "\x00\xff", 3), "any bytes are a key")
	one := newBucket(t, p1, pgrate.BucketConfig{Rate: 0.1, Burst: 2, Name: "accounts", Schema: schema})
	require.Equal(t, 2, allowN(t, one, 3), "the Bucket of the Name shared the empty key's bucket")

	ctx := context.Background()
	require.NoError(t, a.PauseKey(ctx, "dave", time.Minute))
	require.Zero(t, keyAllowN(t, b, "dave", 1), "dave's pause did not hold another instance")
	require.Equal(t, 2, keyAllowN(t, b, "erin", 2), "dave's pause held erin")
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	require.ErrorIs(t, b.Wait(short, "dave"), ratelimit.ErrWouldExceedDeadline)
	require.NoError(t, b.Wait(short, "frank"))

	other := newKeyed(t, p2, pgrate.KeyedConfig{Rate: 0.1, Burst: 2, Name: "users", Schema: schema})
	require.Equal(t, 2, keyAllowN(t, other, "alice", 3), "another Name is another set of buckets")
}

// TestKeyLimiter: For(key) is a ratelimit.Limiter and ratelimit.Pauser of
// that key alone.
func TestKeyLimiter(t *testing.T) {
	t.Parallel()
	pool := connect(t)
	k := newKeyed(t, pool, pgrate.KeyedConfig{Rate: 100, Burst: 5, Name: "accounts", Schema: freshSchema(t, pool)})
	var lim ratelimit.Limiter = k.For("a")
	ctx := context.Background()
	require.NoError(t, lim.Wait(ctx))
	lim.(ratelimit.Pauser).PauseFor(time.Minute)
	require.NoError(t, lim.(*pgrate.KeyLimiter).Err())
	require.Zero(t, keyAllowN(t, k, "a", 1), "a's PauseFor did not pause a")
	require.Equal(t, 5, keyAllowN(t, k, "b", 5), "a's PauseFor paused b")
	ok, err := k.For("a").Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, k.For("a").Pause(ctx, time.Second), "a shorter pause changes nothing, and is no error")
}
