package redisstore_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store/storetest"
)

// benchOnly skips t unless PACER_BENCH=1: the measurements take seconds
// to minutes and print figures rather than guard behaviour.
func benchOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("PACER_BENCH") != "1" {
		t.Skip("a measurement: set PACER_BENCH=1 to run it")
	}
}

// benchClient returns a client of addr, closed when t ends.
func benchClient(t testing.TB, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 64})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pingTime returns the median of n serial PINGs.
func pingTime(t testing.TB, c *redis.Client, n int) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		t0 := time.Now()
		require.NoError(t, c.Ping(context.Background()).Err())
		ds[i] = time.Since(t0)
	}
	p50, _, _ := storetest.Quantiles(ds)
	return p50
}
