package redismutex_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/mutex/redismutex"
)

func TestNewValidates(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // New does not connect
	defer c.Close()
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
		m, err := redismutex.New(c, tc.cfg)
		require.EqualError(t, err, tc.want)
		require.Nil(t, m)
	}
	_, err := redismutex.New(nil, redismutex.Config{Name: "a"})
	require.EqualError(t, err, "redismutex: nil client")

	m, err := redismutex.New(c, redismutex.Config{Name: "a", TTL: 10 * time.Millisecond})
	require.NoError(t, err)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "Close twice")
}
