package redisstore_test

import (
	"context"
	"testing"
	"time"

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
	before := redistest.ReadCommandStats(t, c)
	time.Sleep(span)
	n := redistest.ReadCommandStats(t, c).Minus(before).Calls() - 1 // the INFO of the first count
	t.Logf("idle Runner: %.0f commands in %v (%.2f/s)", n, span, n/span.Seconds())
	require.LessOrEqual(t, n/span.Seconds(), 2.0)
}
