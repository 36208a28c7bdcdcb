package redisstore_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/redis/redisrate"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// The scenarios of Runners in three processes (storetest.RunProcesses):
// with MaxValues, adding to one queue at once, the values they store
// together are the bound exactly; handling a queue that another process
// pauses (OperatorPause), they start no batch until it is resumed, and
// lose nothing; with a Config.KeyLimit that is a redisrate.Keyed on the
// same Redis (KeyLimit), each key's calls over all three keep its rate;
// with PerKey 2 (PerKey), no more than 2 batches of a key run at once
// across them, and 2 do; with tenants of weights 3 and 1 (Tenants), their
// batches split 3:1.
func TestRunnerProcesses(t *testing.T) {
	s, _, p := newStore(t)
	storetest.RunProcesses(t, storetest.Processes{Store: s, Where: p, Child: "TestStoretestChild", KeyGate: keyGate, Gauge: openGauge})
}

// TestStoretestChild is one process of TestRunnerProcesses,
// on the prefix it names.
func TestStoretestChild(t *testing.T) {
	storetest.Child(t, func(t *testing.T, prefix string) store.Store {
		s, err := redisstore.New(t.Context(), client(t), redisstore.Config{Prefix: prefix})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}, keyGate, openGauge)
}

// keyGate is the storetest.KeyGateFunc of the tests: a redisrate.Keyed
// under the store's prefix, whose keys newStore's cleanup deletes with
// the store's.
func keyGate(t *testing.T, prefix string, l storetest.KeyRate) ratelimit.KeyGate[string] {
	k, err := redisrate.NewKeyed(t.Context(), client(t), redisrate.KeyedConfig{Rate: l.Rate, Burst: l.Burst, Name: l.Name, Prefix: prefix})
	require.NoError(t, err)
	return k
}

// gauge is a storetest.Gauge: counters under the prefix's braces, which no
// Store's key is (a Store's keys have a queue's name in the braces, its
// registry the word queues after them), so that the cleanup of the
// prefix takes them too.
type gauge struct {
	c      *redis.Client
	prefix string
}

// openGauge is the storetest.GaugeFunc of the tests.
func openGauge(t *testing.T, prefix string) storetest.Gauge {
	return gauge{client(t), "{" + prefix + "}:test-gauge:"}
}

func (g gauge) Add(ctx context.Context, name string, d int) (int, error) {
	n, err := g.c.IncrBy(ctx, g.prefix+name, int64(d)).Result()
	return int(n), err
}
