package pacer_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
)

// okServer is a RoundTripper that answers 200 to everything and records
// when each request came.
type okServer struct {
	t0 time.Time
	mu sync.Mutex
	at []time.Duration
}

func newOKServer() *okServer { return &okServer{t0: time.Now()} }

func (s *okServer) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.at = append(s.at, time.Since(s.t0))
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

func (s *okServer) times() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.at...)
}

// limitedOnce answers its first request 429 with a Retry-After, then 200.
type limitedOnce struct {
	*okServer
	retryAfter string
	once       sync.Once
}

func (s *limitedOnce) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.okServer.RoundTrip(req)
	s.once.Do(func() {
		resp.StatusCode = http.StatusTooManyRequests
		resp.Header = http.Header{"Retry-After": {s.retryAfter}}
	})
	return resp, err
}

// get makes n requests through c with ctx.
func get(ctx context.Context, c *http.Client, n int) error {
	for range n {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if err := ratelimit.CheckResponse(resp); err != nil {
			return err
		}
	}
	return nil
}

// With the bucket in the Transport only, the time requests wait for it
// shows in Stats.RateLimitWait.
func TestTransportWaitInStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 1, Burst: 1})
		require.NoError(t, err)
		srv := newOKServer()
		client := &http.Client{Transport: &ratelimit.Transport{Base: srv, Limiter: bucket}}
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error { return get(ctx, client, 1) })
		r := newRunner(t, pacer.Config[string, int]{}, rc)
		for _, k := range []string{"a", "b", "c"} {
			require.NoError(t, r.Add(k, 1))
		}
		stop := start(t, r)
		time.Sleep(time.Minute)
		stop()
		require.Equal(t, []time.Duration{0, time.Second, 2 * time.Second}, srv.times())
		require.Equal(t, 2*time.Second, r.Stats().RateLimitWait)
		require.Equal(t, bucket.Stats().WaitTime, r.Stats().RateLimitWait)
	})
}

// A Retry-After that the Transport sleeps itself, having no Limiter to
// pause, shows in Stats.RateLimitWait too.
func TestTransportRetryAfterSleepInStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &limitedOnce{okServer: newOKServer(), retryAfter: "3"}
		client := &http.Client{Transport: &ratelimit.Transport{Base: srv}}
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error { return get(ctx, client, 1) })
		r := newRunner(t, pacer.Config[string, int]{}, rc)
		require.NoError(t, r.Add("a", 1))
		stop := start(t, r)
		stop()
		require.Equal(t, []time.Duration{0, 3 * time.Second}, srv.times())
		require.Equal(t, 3*time.Second, r.Stats().RateLimitWait)
	})
}
