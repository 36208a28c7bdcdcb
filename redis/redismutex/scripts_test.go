//go:build unix

package redismutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redismutex"
)

// A server that does not have the function library yet (a new one, or
// after FUNCTION FLUSH) runs its functions all the same: the first call
// that finds it missing loads it.
func TestFunctionsOnNewServer(t *testing.T) {
	t.Parallel()
	c := startOwnServer(t)
	ctx := context.Background()
	m := newLockerOn(t, c, redismutex.Config{Name: "t", TTL: 300 * time.Millisecond})
	for range 2 {
		require.NoError(t, c.FunctionFlush(ctx).Err())
		l, err := m.TryLock(ctx, "k")
		require.NoError(t, err)
		_, err = m.TryLock(ctx, "k")
		require.ErrorIs(t, err, redismutex.ErrLocked)
		require.NoError(t, c.FunctionFlush(ctx).Err())
		time.Sleep(150 * time.Millisecond) // one renewal, which loads it again
		require.NoError(t, l.Context().Err())
		require.NoError(t, c.FunctionFlush(ctx).Err())
		require.NoError(t, l.Unlock(ctx))
		l, err = m.TryLock(ctx, "k")
		require.NoError(t, err)
		require.NoError(t, l.Unlock(ctx))
	}
}

// startOwnServer starts a redis-server of the test's own, without
// persistence, stopped when the test ends, and returns a client of it.
func startOwnServer(t *testing.T) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
