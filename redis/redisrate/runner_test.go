package redisrate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/redis/redisrate"
)

// TestRunnerPauseAllPausesEveryInstance: a pacer Runner whose
// Config.Limiter is a Bucket pauses it on PauseAll, and so pauses another
// instance's Bucket of the same Name; the Runner retries after the pause.
func TestRunnerPauseAllPausesEveryInstance(t *testing.T) {
	t.Parallel()
	c1, c2 := client(t), client(t)
	p := prefix(t, c1)
	cfg := redisrate.BucketConfig{Rate: 100, Burst: 10, Name: "remote", Prefix: p}
	here, there := newLimiter(t, c1, cfg), newLimiter(t, c2, cfg)

	calls := make(chan time.Time, 2)
	r, err := pacer.New(pacer.Config[string, string]{Limiter: here},
		func(ctx context.Context, _ string, _ []string) error {
			calls <- time.Now()
			if pacer.Attempt(ctx) == 1 {
				return pacer.PauseAll(errors.New("429 Too Many Requests"), 2*time.Second)
			}
			return nil
		})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, r.Add(ctx, "alice", "edit"))
	ran := make(chan error, 1)
	go func() { ran <- r.Run(ctx) }()
	defer func() {
		require.NoError(t, r.Shutdown(ctx))
		require.NoError(t, <-ran)
	}()

	first := <-calls
	eventually(t, "PauseAll to pause the bucket", func() bool { return c1.Exists(ctx, pauseKey(p, "remote")).Val() == 1 })
	ok, err := there.Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok, "the other instance was not paused")
	second := <-calls
	require.GreaterOrEqual(t, second.Sub(first), 2*time.Second, "retried before the pause ended")
	require.NoError(t, here.Err())
}
