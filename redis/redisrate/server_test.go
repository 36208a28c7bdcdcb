package redisrate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// client and dial return clients of the tests' Redis; see
// redistest.Client and redistest.Dial.
var client, dial = redistest.Client, redistest.Dial

// prefix returns a Prefix no other test uses, nor starts with; its keys,
// and those of the prefixes that start with it, are deleted when t ends.
func prefix(t testing.TB, c *redis.Client) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	p := "pacertest-" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, "{"+p+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return p
}

// serverTime reads the server's clock.
func serverTime(t testing.TB, c *redis.Client) time.Time {
	t.Helper()
	now, err := c.Time(context.Background()).Result()
	require.NoError(t, err)
	return now
}

// eventually polls cond every 5 ms until it holds, failing t after 5 s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
