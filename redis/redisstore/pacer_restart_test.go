//go:build unix

package redisstore_test

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestRedisRestart runs a Runner on a redis-server of its own and adds
// values to it without pause while the server is stopped (SIGTERM) and
// started again on the same port and data directory (storetest.RunRestart).
// The server writes every acknowledged write to disk before it answers
// (appendfsync always): what survives a restart of Redis is up to its
// persistence. The client is told not to retry (MaxRetries -1,
// DialerRetries 1), as the package doc advises for a fast failure.
func TestRedisRestart(t *testing.T) {
	srv := redistest.StartDurableServer(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { _ = c.Close() })
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: prefix(t)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	storetest.RunRestart(t, s, srv.Start, storetest.Stop{Name: "SIGTERM", Do: srv.Stop})
}
