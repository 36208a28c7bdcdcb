package redisrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/redis/redisrate"
)

func newKeyed(t testing.TB, c redis.UniversalClient, cfg redisrate.KeyedConfig) *redisrate.Keyed {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "accounts"
	}
	k, err := redisrate.NewKeyed(t.Context(), c, cfg)
	require.NoError(t, err)
	return k
}

func keyTat(p, key string) string { return redisname.KeyPrefix(p, "rate", "accounts") + "tat:" + key }
func keyPause(p, key string) string {
	return redisname.KeyPrefix(p, "rate", "accounts") + "pause:" + key
}

// keyAllowN calls k.Allow(key) n times and returns how many were allowed.
func keyAllowN(t testing.TB, k *redisrate.Keyed, key string, n int) int {
	t.Helper()
	return allowN(t, allowFunc(func(ctx context.Context) (bool, error) { return k.Allow(ctx, key) }), n)
}

// allowFunc is a func as a value with an Allow method.
type allowFunc func(context.Context) (bool, error)

func (f allowFunc) Allow(ctx context.Context) (bool, error) { return f(ctx) }

// TestKeyedIndependent: each key has its own bucket, shared by every
// Keyed with the same Name; a key's pause holds that key only.
func TestKeyedIndependent(t *testing.T) {
	t.Parallel()
	c1, c2 := client(t), client(t)
	p := prefix(t, c1)
	cfg := redisrate.KeyedConfig{Rate: 0.1, Burst: 2, Prefix: p}
	a, b := newKeyed(t, c1, cfg), newKeyed(t, c2, cfg)
	require.Equal(t, 2, keyAllowN(t, a, "alice", 3))
	require.Zero(t, keyAllowN(t, b, "alice", 1), "another instance saw a fresh bucket for alice")
	require.Equal(t, 2, keyAllowN(t, b, "bob", 3), "bob paid for alice")
	require.Equal(t, 2, keyAllowN(t, a, "", 3), "the empty key is a key")
	require.Equal(t, 2, keyAllowN(t, a, "{carol}:tat", 3), "a key with braces is a key")

	ctx := context.Background()
	require.NoError(t, a.PauseKey(ctx, "dave", time.Minute))
	require.Zero(t, keyAllowN(t, b, "dave", 1), "dave's pause did not hold another instance")
	require.Equal(t, 2, keyAllowN(t, b, "erin", 2), "dave's pause held erin")
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	require.ErrorIs(t, b.Wait(short, "dave"), ratelimit.ErrWouldExceedDeadline)
	require.NoError(t, b.Wait(short, "frank"))
}

// TestKeyedExpiry: a key's state expires when its bucket is full again,
// and its pause key when the pause ends.
func TestKeyedExpiry(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := prefix(t, c)
	ctx := context.Background()

	slow := newKeyed(t, c, redisrate.KeyedConfig{Rate: 0.1, Burst: 3, Prefix: p})
	require.Equal(t, 2, keyAllowN(t, slow, "a", 2))
	ttl := c.PTTL(ctx, keyTat(p, "a")).Val()
	require.InDelta(t, 20*time.Second, ttl, float64(2*time.Second), "two tokens at 10 s each")
	require.NoError(t, slow.PauseKey(ctx, "b", 30*time.Second))
	ttl = c.PTTL(ctx, keyPause(p, "b")).Val()
	require.InDelta(t, 30*time.Second, ttl, float64(2*time.Second), "the pause key lasts the pause")
	ttl = c.PTTL(ctx, keyTat(p, "b")).Val()
	require.InDelta(t, 30*time.Second, ttl, float64(2*time.Second), "the pause empties the bucket: 3 tokens at 10 s each")

	fast := newKeyed(t, c, redisrate.KeyedConfig{Rate: 5, Burst: 2, Name: "accounts", Prefix: p})
	require.Equal(t, 1, keyAllowN(t, fast, "c", 1))
	ttl = c.PTTL(ctx, keyTat(p, "c")).Val()
	require.Greater(t, ttl, time.Duration(0))
	// The key expires at the first whole second of the server's clock past
	// its tat, which PTTL, counting from the current millisecond, reads as
	// up to 1 ms more.
	require.LessOrEqual(t, ttl, 1201*time.Millisecond, "one token at 200 ms, then the rest of its second")
	eventually(t, "c's state to expire", func() bool { return c.Exists(ctx, keyTat(p, "c")).Val() == 0 })
	require.NoError(t, fast.PauseKey(ctx, "d", 50*time.Millisecond))
	eventually(t, "d's pause to expire", func() bool {
		return c.Exists(ctx, keyPause(p, "d"), keyTat(p, "d")).Val() == 0
	})
}

// TestKeyLimiter: For(key) is a ratelimit.Limiter and ratelimit.Pauser of that key alone.
func TestKeyLimiter(t *testing.T) {
	t.Parallel()
	c := client(t)
	p := prefix(t, c)
	k := newKeyed(t, c, redisrate.KeyedConfig{Rate: 100, Burst: 5, Prefix: p})
	var lim ratelimit.Limiter = k.For("a")
	ctx := context.Background()
	require.NoError(t, lim.Wait(ctx))
	lim.(ratelimit.Pauser).PauseFor(time.Minute)
	require.NoError(t, k.For("a").Err())
	require.Zero(t, keyAllowN(t, k, "a", 1), "a's PauseFor did not pause a")
	require.Equal(t, 5, keyAllowN(t, k, "b", 5), "a's PauseFor paused b")
	ok, err := k.For("a").Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok)
}
