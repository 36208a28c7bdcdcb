package redisstore_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
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

// quantiles returns the p50, p99 and max of ds, which it sorts.
func quantiles(ds []time.Duration) (p50, p99, top time.Duration) {
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(int(q*float64(len(ds))), len(ds)-1)] }
	return at(0.50), at(0.99), ds[len(ds)-1]
}

// pingTime returns the median of n serial PINGs.
func pingTime(t testing.TB, c *redis.Client, n int) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		t0 := time.Now()
		require.NoError(t, c.Ping(context.Background()).Err())
		ds[i] = time.Since(t0)
	}
	p50, _, _ := quantiles(ds)
	return p50
}
