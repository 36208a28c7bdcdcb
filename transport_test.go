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
			require.NoError(t, r.Add(t.Context(), k, 1))
		}
		stop := start(t, r)
		time.Sleep(time.Minute)
		stop()
		require.Equal(t, []time.Duration{0, time.Second, 2 * time.Second}, srv.times())
		require.Equal(t, 2*time.Second, stats(t, r).RateLimitWait)
		require.Equal(t, bucket.Stats().WaitTime, stats(t, r).RateLimitWait)
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
		require.NoError(t, r.Add(t.Context(), "a", 1))
		stop := start(t, r)
		stop()
		require.Equal(t, []time.Duration{0, 3 * time.Second}, srv.times())
		require.Equal(t, 3*time.Second, stats(t, r).RateLimitWait)
	})
}

// With the same bucket as Config.Limiter and in the Transport, a call's
// first request uses the token the Runner took for the call: n requests
// cost n tokens, not n+1.
func TestTransportUsesTheCallsToken(t *testing.T) {
	for _, requests := range []int{0, 1, 2} {
		synctest.Test(t, func(t *testing.T) {
			bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 1.0 / 3600, Burst: 10})
			require.NoError(t, err)
			client := &http.Client{Transport: &ratelimit.Transport{Base: newOKServer(), Limiter: bucket}}
			rc := newRecorder(func(ctx context.Context, _ string, _ []int) error { return get(ctx, client, requests) })
			r := newRunner(t, pacer.Config[string, int]{Limiter: bucket}, rc)
			for _, k := range []string{"a", "b", "c"} {
				require.NoError(t, r.Add(t.Context(), k, 1))
			}
			stop := start(t, r)
			stop()
			require.Len(t, rc.Calls(), 3)
			spent := 3 * max(requests, 1)
			require.InDelta(t, 10-spent, bucket.TokensAt(time.Now()), 1e-9, "%d requests per call", requests)
		})
	}
}

// A token paid for a call is void once a pause began, as every token
// reserved before a pause is: the request waits for the pause's end.
func TestTransportPaidTokenVoidedByPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 1, Burst: 1})
		require.NoError(t, err)
		srv := newOKServer()
		client := &http.Client{Transport: &ratelimit.Transport{Base: srv, Limiter: bucket}}
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error {
			bucket.PauseFor(10 * time.Second) // another worker saw a 429
			return get(ctx, client, 1)
		})
		r := newRunner(t, pacer.Config[string, int]{Limiter: bucket}, rc)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		stop := start(t, r)
		stop()
		require.Equal(t, []time.Duration{10 * time.Second}, srv.times())
	})
}

// Limiters that cannot be compared (ratelimit.All's) are never taken for
// the same one, and comparing them does not panic.
func TestTransportIncomparableLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 1.0 / 3600, Burst: 10})
		require.NoError(t, err)
		both := ratelimit.All(bucket)
		client := &http.Client{Transport: &ratelimit.Transport{Base: newOKServer(), Limiter: both}}
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error { return get(ctx, client, 1) })
		r := newRunner(t, pacer.Config[string, int]{Limiter: both}, rc)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		stop := start(t, r)
		stop()
		require.Len(t, rc.Calls(), 1)
		require.InDelta(t, 8, bucket.TokensAt(time.Now()), 1e-9)
	})
}
