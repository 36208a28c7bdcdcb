package ratelimit_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/pacerkit/pacer/ratelimit"
)

// pipeNet serves HTTP over net.Pipe connections, so a server and its clients
// can run inside a synctest bubble (real sockets never block durably).
type pipeNet struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeNet() *pipeNet {
	return &pipeNet{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (p *pipeNet) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.done:
		return nil, net.ErrClosed
	}
}

func (p *pipeNet) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}

func (p *pipeNet) Addr() net.Addr { return pipeAddr{} }

func (p *pipeNet) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case p.conns <- server:
		return client, nil
	case <-p.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// serve runs h on an in-memory network and returns a transport that reaches
// it. Everything is shut down when the test ends.
func serve(t *testing.T, h http.Handler) *http.Transport {
	pn := newPipeNet()
	srv := &http.Server{Handler: h}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(pn)
	}()
	tr := &http.Transport{DialContext: pn.DialContext}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		require.NoError(t, srv.Close())
		<-served
	})
	return tr
}

// TestTransportAgainstRateLimitedServer: 50 concurrent requests through a
// Transport whose bucket bursts more than the server allows. The excess of
// the first burst is answered 429 with Retry-After; that pauses the bucket
// for everyone, so every request succeeds and no further 429 comes.
func TestTransportAgainstRateLimitedServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const serverRate, serverBurst, clientBurst = 5, 5, 10
		server := rate.NewLimiter(serverRate, serverBurst)
		var ok200, tooMany atomic.Int64
		tr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !server.Allow() {
				tooMany.Add(1)
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, "slow down")
				return
			}
			ok200.Add(1)
			fmt.Fprint(w, "ok")
		}))
		bucket := newBucket(t, ratelimit.BucketConfig{Rate: serverRate, Burst: clientBurst})
		client := &http.Client{Transport: &ratelimit.Transport{Base: tr, Limiter: bucket, MaxRetries: 5}}
		start := time.Now()
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				resp, err := client.Get("http://api.test/items/" + strconv.Itoa(i))
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				require.NoError(t, resp.Body.Close())
				require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
			})
		}
		wg.Wait()
		require.Equal(t, int64(50), ok200.Load())
		require.LessOrEqual(t, tooMany.Load(), int64(clientBurst-serverBurst))
		require.Positive(t, tooMany.Load(), "the test should provoke 429s")
		require.Positive(t, bucket.Stats().Pauses)
		// 50 successes at the server's pace: 5 at once, 45 more at 5/s,
		// plus at most the 1s pause.
		require.LessOrEqual(t, time.Since(start), 10*time.Second)
	})
}

// script is a base RoundTripper that answers with scripted statuses and
// records what it was sent.
type script struct {
	mu       sync.Mutex
	statuses []int
	retryIn  string
	bodies   []string
	sent     []*trackedBody
}

type trackedBody struct {
	io.Reader
	closed bool
	read   bool
}

func (b *trackedBody) Read(p []byte) (int, error) { b.read = true; return b.Reader.Read(p) }
func (b *trackedBody) Close() error               { b.closed = true; return nil }

func (s *script) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Body != nil {
		b, _ := io.ReadAll(req.Body)
		req.Body.Close()
		s.bodies = append(s.bodies, string(b))
	} else {
		s.bodies = append(s.bodies, "")
	}
	status := http.StatusOK
	if len(s.bodies) <= len(s.statuses) {
		status = s.statuses[len(s.bodies)-1]
	}
	body := &trackedBody{Reader: strings.NewReader("response")}
	s.sent = append(s.sent, body)
	h := http.Header{}
	if s.retryIn != "" {
		h.Set("Retry-After", s.retryIn)
	}
	return &http.Response{StatusCode: status, Header: h, Body: body, Request: req}, nil
}

func TestTransportRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := &script{statuses: []int{429, 503}, retryIn: "2"}
		bucket := newBucket(t, ratelimit.BucketConfig{Rate: 100, Burst: 1})
		tr := &ratelimit.Transport{Base: base, Limiter: bucket}
		req, err := http.NewRequest(http.MethodPost, "http://api.test/", strings.NewReader("payload"))
		require.NoError(t, err)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, []string{"payload", "payload", "payload"}, base.bodies, "the body was not rewound")
		require.Equal(t, 4*time.Second, time.Since(start), "two pauses of 2s")
		for _, b := range base.sent[:2] {
			require.True(t, b.read && b.closed, "a discarded response was not drained and closed")
		}
		require.Equal(t, uint64(2), bucket.Stats().Pauses)
	})
}

func TestTransportGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, tc := range []struct {
			name     string
			statuses []int
			retryIn  string
			retries  int
			body     io.Reader // sent without GetBody when not nil
			want     int       // attempts
			status   int
		}{
			{name: "bounded", statuses: []int{429, 429, 429, 429, 429}, retryIn: "1", retries: 2, want: 3, status: 429},
			{name: "default three", statuses: []int{429, 429, 429, 429, 429}, retryIn: "1", want: 4, status: 429},
			{name: "no retries", statuses: []int{429}, retryIn: "1", retries: -1, want: 1, status: 429},
			{name: "no Retry-After", statuses: []int{429}, want: 1, status: 429},
			{name: "bad Retry-After", statuses: []int{503}, retryIn: "-3", want: 1, status: 503},
			{name: "too long Retry-After", statuses: []int{503}, retryIn: "7200", want: 1, status: 503},
			{name: "other error", statuses: []int{500}, retryIn: "1", want: 1, status: 500},
			{name: "body without GetBody", statuses: []int{429}, retryIn: "1", body: io.MultiReader(strings.NewReader("x")), want: 1, status: 429},
		} {
			base := &script{statuses: tc.statuses, retryIn: tc.retryIn}
			bucket := newBucket(t, ratelimit.BucketConfig{Rate: 100, Burst: 1})
			tr := &ratelimit.Transport{Base: base, Limiter: bucket, MaxRetries: tc.retries}
			req, err := http.NewRequest(http.MethodPost, "http://api.test/", tc.body)
			require.NoError(t, err)
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err, tc.name)
			require.Equal(t, tc.status, resp.StatusCode, tc.name)
			require.Len(t, base.bodies, tc.want, tc.name)
			require.False(t, base.sent[len(base.sent)-1].closed, "%s: the returned body was closed", tc.name)
		}
	})
}

// TestTransportWithoutPauser: a limiter that cannot pause (or none) makes
// the Transport sleep the Retry-After itself.
func TestTransportWithoutPauser(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, lim := range []ratelimit.Limiter{nil, &countingLimiter{}} {
			base := &script{statuses: []int{429}, retryIn: "3"}
			tr := &ratelimit.Transport{Base: base, Limiter: lim}
			req, err := http.NewRequest(http.MethodGet, "http://api.test/", nil)
			require.NoError(t, err)
			start := time.Now()
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			require.Equal(t, 3*time.Second, time.Since(start))
		}
	})
}

// TestTransportContext: the request's ctx ends the wait on the limiter and
// the sleep after a Retry-After.
func TestTransportContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket := newBucket(t, ratelimit.BucketConfig{Rate: 1, Burst: 1})
		bucket.PauseFor(time.Hour)
		base := &script{}
		tr := &ratelimit.Transport{Base: base, Limiter: bucket}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		body := &trackedBody{Reader: strings.NewReader("x")}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://api.test/", body)
		require.NoError(t, err)
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, ratelimit.ErrWouldExceedDeadline)
		require.True(t, body.closed, "the request body was not closed")
		require.Empty(t, base.bodies)

		base = &script{statuses: []int{429}, retryIn: "60"}
		tr = &ratelimit.Transport{Base: base}
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
		require.NoError(t, err)
		_, err = tr.RoundTrip(req)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

// TestTransportPausesOneKey: with a key of a Keyed limiter, a Retry-After
// pauses that key only.
func TestTransportPausesOneKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		accounts := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 100, Burst: 5})
		base := &script{statuses: []int{429}, retryIn: "2"}
		tr := &ratelimit.Transport{Base: base, Limiter: accounts.For("alice")}
		req, err := http.NewRequest(http.MethodGet, "http://api.test/", nil)
		require.NoError(t, err)
		start := time.Now()
		var wg sync.WaitGroup
		wg.Go(func() {
			resp, err := tr.RoundTrip(req)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, resp.StatusCode)
		})
		synctest.Wait()
		require.False(t, accounts.Allow("alice"), "alice should be paused")
		require.True(t, accounts.Allow("bob"), "bob should not be paused")
		wg.Wait()
		require.Equal(t, 2*time.Second, time.Since(start))
	})
}
