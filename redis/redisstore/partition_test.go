package redisstore_test

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// A Runner cut off from Redis while its handler runs, by a partition that
// keeps its connections open and silent, stops its handler before another
// instance can lease the key, which then runs it
// (storetest.RunPartition): with go-redis' default options, whose
// commands ignore ctx deadlines, and with ContextTimeoutEnabled.
func TestPartitionedHolderRedis(t *testing.T) {
	for _, ctxTimeout := range []bool{false, true} {
		t.Run(fmt.Sprintf("ContextTimeoutEnabled=%v", ctxTimeout), func(t *testing.T) {
			direct, c, p := newStore(t)
			storetest.RunPartition(t, storetest.Partition{Addr: c.Options().Addr, Direct: direct,
				Open: func(t *testing.T, addr string) store.Store { return storeVia(t, addr, ctxTimeout, p) }})
		})
	}
}

// storeVia returns a Store under prefix p on the tests' Redis, reached at
// addr (a proxy's), whose client observes ctx deadlines if ctxTimeout.
func storeVia(t *testing.T, addr string, ctxTimeout bool, p string) *redisstore.Store {
	t.Helper()
	opt, err := redis.ParseURL(serverURL())
	require.NoError(t, err)
	opt.Addr, opt.ContextTimeoutEnabled = addr, ctxTimeout
	s, err := redisstore.New(t.Context(), redistest.Dial(t, opt), redisstore.Config{Prefix: p})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}
