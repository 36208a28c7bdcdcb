package redismutex_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redismutex"
)

func TestNewValidates(t *testing.T) {
	c := redistest.Unreachable(t) // the Config is checked first
	for _, tc := range []struct {
		cfg  redismutex.Config
		want string
	}{
		{redismutex.Config{}, "redismutex: Config.Name is required"},
		{redismutex.Config{Name: "a{b"}, `redismutex: Config.Name "a{b" has a brace, which would break the hash tag`},
		{redismutex.Config{Name: "a", Prefix: "p}"}, `redismutex: Config.Prefix "p}" has a brace, which would break the hash tag`},
		{redismutex.Config{Name: "a", TTL: -time.Second}, "redismutex: Config.TTL must be at least 10ms, got -1s"},
		{redismutex.Config{Name: "a", TTL: 9 * time.Millisecond}, "redismutex: Config.TTL must be at least 10ms, got 9ms"},
		{redismutex.Config{Name: "a", TTL: 10*time.Millisecond - 1}, "redismutex: Config.TTL must be at least 10ms, got 9ms"},
	} {
		m, err := redismutex.New(t.Context(), c, tc.cfg)
		require.EqualError(t, err, tc.want)
		require.Nil(t, m)
	}
	_, err := redismutex.New(t.Context(), nil, redismutex.Config{Name: "a"})
	require.EqualError(t, err, "redismutex: nil client")

	m, err := redismutex.New(t.Context(), client(t), redismutex.Config{Name: "a", TTL: 10 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "Close twice")
}

// TestNewUnreachable: New of a wrong address fails at once, well before
// a ctx of a second ends (go-redis' default retries take about 1.7 s),
// with the address and what is missing.
func TestNewUnreachable(t *testing.T) {
	c := redistest.Unreachable(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	m, err := redismutex.New(ctx, c, redismutex.Config{Name: "a"})
	require.ErrorContains(t, err, "redismutex: "+c.Options().Addr+": not reachable: dial tcp ")
	require.Nil(t, m)
	require.NoError(t, ctx.Err(), "New waited for ctx's deadline")
}
