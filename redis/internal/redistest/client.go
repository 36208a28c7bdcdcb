package redistest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
)

// Client returns a client of the tests' Redis (enginetest.RedisURL),
// closed when tb ends. Without a server the test is skipped, or fails
// under CI.
func Client(tb testing.TB) *redis.Client {
	tb.Helper()
	opt, err := redis.ParseURL(enginetest.RedisURL())
	require.NoError(tb, err, "PACER_REDIS_URL")
	return Dial(tb, opt)
}

// Dial is Client for the server and options opt gives.
func Dial(tb testing.TB, opt *redis.Options) *redis.Client {
	tb.Helper()
	c := redis.NewClient(opt)
	tb.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		enginetest.Missing(tb, fmt.Sprintf("no Redis at %s (%v): start redis-server, or set PACER_REDIS_URL, to run these tests", opt.Addr, err))
	}
	return c
}
