//go:build unix

package redismutex_test

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/mutex/redismutex"
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
	bin := enginetest.RedisServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().(*net.TCPAddr)
	require.NoError(t, ln.Close())
	cmd := exec.Command(bin, "--bind", "127.0.0.1", "--port", strconv.Itoa(addr.Port), "--save", "", "--appendonly", "no")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	c := redis.NewClient(&redis.Options{Addr: addr.String()})
	t.Cleanup(func() { _ = c.Close() })
	require.Eventually(t, func() bool { return c.Ping(context.Background()).Err() == nil },
		10*time.Second, 10*time.Millisecond, "redis-server starts")
	return c
}
