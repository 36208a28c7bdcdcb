package redismutex_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redismutex"
)

// client returns a client of the tests' Redis, one per Locker, as
// separate processes would have; see redistest.Client.
var client = redistest.Client

// prefix returns a Config.Prefix no other test uses, nor starts with;
// its keys, and those of the prefixes that start with it, are deleted
// when t ends.
func prefix(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	p := "pacertest-" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		c := client(t)
		ctx := context.Background()
		iter := c.Scan(ctx, 0, "{"+p+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return p
}

// newLocker returns a Locker on a client of its own, configured by cfg,
// closed when t ends.
func newLocker(t testing.TB, cfg redismutex.Config) *redismutex.Locker {
	t.Helper()
	return newLockerOn(t, client(t), cfg)
}

func newLockerOn(t testing.TB, c redis.UniversalClient, cfg redismutex.Config) *redismutex.Locker {
	t.Helper()
	m, err := redismutex.New(t.Context(), c, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// config returns a Config of Name "t" under a prefix of t's own.
func config(t testing.TB, ttl time.Duration) redismutex.Config {
	return redismutex.Config{TTL: ttl, Prefix: prefix(t), Name: "t"}
}

// lockKey is the Redis key of the lock of key under cfg.
func lockKey(cfg redismutex.Config, key string) string {
	return redisname.KeyPrefix(cfg.Prefix, "lock", cfg.Name) + "k:" + key
}
