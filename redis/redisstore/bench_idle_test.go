package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store/storetest"
)

// An idle Runner (2 workers, nothing to do) sends at most 2 commands a
// second to Redis: its workers block on the server instead of polling.
// The count is the delta of INFO commandstats over 10 s on a redis-server
// of the test's own, less the INFO commands of the count itself.
func TestIdleRunnerCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 11 s")
	}
	addr := redistest.StartServer(t).Addr()
	c := benchClient(t, addr)
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "idle"})
	require.NoError(t, err)
	defer s.Close()
	r, err := pacer.New(pacer.Config[string, int]{Store: s, Name: "q", Workers: 2},
		func(context.Context, string, []int) error { return nil })
	require.NoError(t, err)
	storetest.StartRunner(t, r)
	// One value through, so that the Runner did work before it idles.
	handled := make(chan struct{})
	r2, err := pacer.New(pacer.Config[string, int]{Store: s, Name: "q2", Workers: 2},
		func(context.Context, string, []int) error { close(handled); return nil })
	require.NoError(t, err)
	storetest.StartRunner(t, r2)
	require.NoError(t, r2.Add(t.Context(), "k", 1))
	<-handled
	require.NoError(t, r2.Shutdown(t.Context()))
	time.Sleep(time.Second) // settle into idling

	const span = 10 * time.Second
	before := commandCalls(t, c)
	time.Sleep(span)
	after := commandCalls(t, c)
	n := after - before - 1 // the INFO of the first count
	t.Logf("idle Runner: %d commands in %v (%.2f/s)", n, span, float64(n)/span.Seconds())
	require.LessOrEqual(t, float64(n)/span.Seconds(), 2.0)
}

// commandCalls returns the sum of calls over INFO commandstats.
func commandCalls(t *testing.T, c *redis.Client) int {
	info, err := c.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	total := 0
	for _, line := range strings.Split(info, "\n") {
		_, stats, ok := strings.Cut(line, ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(stats, ",")
		n, err := strconv.Atoi(calls)
		require.NoError(t, err)
		total += n
	}
	return total
}
