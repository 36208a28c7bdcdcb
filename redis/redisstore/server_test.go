package redisstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
)

// serverURL is the Redis the tests use: PACER_REDIS_URL, or a local one.
func serverURL() string { return enginetest.RedisURL() }

// client returns a client of the tests' Redis; see redistest.Client.
var client = redistest.Client

// prefix returns a Config.Prefix no other test uses.
func prefix(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "pacertest-" + hex.EncodeToString(b[:])
}

// newStore returns a Store on the test server under its own prefix, whose
// keys are deleted when t ends.
func newStore(t testing.TB) (*redisstore.Store, *redis.Client, string) {
	t.Helper()
	c := client(t)
	p := prefix(t)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: p})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = s.Close()
		ctx := context.Background()
		for _, k := range scan(t, c, p) {
			c.Del(ctx, k)
		}
	})
	return s, c, p
}

// scan returns the names of the keys under prefix p, and under the
// prefixes that start with p (p+":eu" too).
func scan(t testing.TB, c *redis.Client, p string) []string {
	t.Helper()
	var keys []string
	iter := c.Scan(context.Background(), 0, "{"+p+"*", 1000).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	require.NoError(t, iter.Err())
	return keys
}
