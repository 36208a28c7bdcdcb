package redistest

import (
	"net"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// ClosedAddr returns an address on which nothing listens: a port of
// 127.0.0.1 just closed.
func ClosedAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	addr := ln.Addr().String()
	require.NoError(tb, ln.Close())
	return addr
}

// Unreachable returns a client, with go-redis' default options, of
// ClosedAddr, closed when tb ends: a wrong address, as a user might give.
func Unreachable(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: ClosedAddr(tb)})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}
