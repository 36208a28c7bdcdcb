package redisrate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/redis/redisrate"
)

// TestTransportPausesEveryInstance: a 429 with Retry-After that one
// instance's ratelimit.Transport receives pauses the shared bucket, so
// another instance's Bucket of the same Name holds too; the Transport
// retries after the pause.
func TestTransportPausesEveryInstance(t *testing.T) {
	t.Parallel()
	c1, c2 := client(t), client(t)
	p := prefix(t, c1)
	cfg := redisrate.BucketConfig{Rate: 100, Burst: 10, Name: "remote", Prefix: p}
	here, there := newLimiter(t, c1, cfg), newLimiter(t, c2, cfg)

	var mu sync.Mutex
	var arrived []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived = append(arrived, time.Now())
		n := len(arrived)
		mu.Unlock()
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	hc := &http.Client{Transport: &ratelimit.Transport{Limiter: here, Base: srv.Client().Transport}}
	defer hc.CloseIdleConnections()

	ctx := context.Background()
	status := make(chan int, 1)
	go func() {
		resp, err := hc.Get(srv.URL)
		if err != nil {
			t.Error(err)
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	eventually(t, "the 429 to pause the bucket", func() bool { return c1.Exists(ctx, pauseKey(p, "remote")).Val() == 1 })
	ok, err := there.Allow(ctx)
	require.NoError(t, err)
	require.False(t, ok, "the other instance was not paused")
	require.NoError(t, there.Wait(ctx))
	mu.Lock()
	first := arrived[0]
	mu.Unlock()
	require.GreaterOrEqual(t, time.Since(first), 2*time.Second, "the other instance's Wait returned before the Retry-After")

	require.Equal(t, http.StatusOK, <-status)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, arrived, 2)
	require.GreaterOrEqual(t, arrived[1].Sub(arrived[0]), 2*time.Second, "retried before the Retry-After")
	require.NoError(t, here.Err())
}
