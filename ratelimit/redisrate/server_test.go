package redisrate_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
)

// client returns a client of the test Redis, closed when t ends; without
// a server the test is skipped, or fails under CI.
func client(t testing.TB) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(enginetest.RedisURL())
	require.NoError(t, err, "PACER_REDIS_URL")
	return dial(t, opt)
}

func dial(t testing.TB, opt *redis.Options) *redis.Client {
	t.Helper()
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		enginetest.Missing(t, fmt.Sprintf("no Redis at %s (%v): start redis-server, or set PACER_REDIS_URL, to run these tests", opt.Addr, err))
	}
	return c
}

// prefix returns a Prefix no other test uses; its keys are deleted when t
// ends.
func prefix(t testing.TB, c *redis.Client) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	p := "pacertest-" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, "{"+p+":*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return p
}

// closedAddr returns an address where nothing listens.
func closedAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
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
