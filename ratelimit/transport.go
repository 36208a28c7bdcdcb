package ratelimit

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/internal/callctx"
	"github.com/pacerkit/pacer/internal/timing"
)

// Transport is an http.RoundTripper that paces requests with a Limiter and
// obeys the server's Retry-After.
//
// Before every attempt it waits on Limiter. When the response is 429 Too
// Many Requests or 503 Service Unavailable with a valid Retry-After (see
// ParseRetryAfter), it pauses Limiter for that long if Limiter is a Pauser,
// so every request sharing the limiter holds back, not just this one; then,
// if retries are left and the request can be sent again, it drains and
// closes the response body and retries. Without a Pauser it sleeps the
// Retry-After itself before retrying. A request can be sent again when it
// has no body or has GetBody (http.NewRequest sets it for in-memory
// bodies); the body is rewound with GetBody. The last response, or one that
// is not retried, is returned as is; a 429 or 503 without a usable
// Retry-After is never retried.
//
// Waiting stops when the request's context ends, with its error. A
// Transport is safe for concurrent use if its Base and Limiter are. Its
// zero value sends through http.DefaultTransport without pacing and
// retries a 429/503 with Retry-After up to 3 times.
type Transport struct {
	// Base sends the requests. The default is http.DefaultTransport.
	Base http.RoundTripper
	// Limiter paces every attempt. Nil means no pacing.
	Limiter Limiter
	// MaxRetries bounds the retries of one request after 429/503 with
	// Retry-After. The default (0) is 3; a negative value means none.
	MaxRetries int
	// MaxRetryAfter is the longest Retry-After obeyed; a response asking for
	// more is returned as is. The default is DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// Clock tells the time (for HTTP-date Retry-After values) and sleeps
	// when Limiter is not a Pauser. The default is clock.New().
	Clock clock.Clock
}

var _ http.RoundTripper = (*Transport)(nil)

// drainLimit bounds how much of a discarded body is read so that its
// connection can be reused.
const drainLimit = 64 << 10

// RoundTrip sends req, waiting on the limiter before each attempt and
// retrying after Retry-After as described on Transport.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	retries := t.MaxRetries
	if retries == 0 {
		retries = 3
	}
	rewindable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	clk := timing.From(t.Clock)
	call := callctx.From(ctx) // set by a pacer Runner around its handler
	for attempt := 0; ; attempt++ {
		if t.Limiter != nil {
			if err := t.wait(ctx, clk, call); err != nil {
				if attempt == 0 && req.Body != nil {
					req.Body.Close() // a RoundTripper must close the body, even on errors
				}
				return nil, err
			}
		}
		r := req
		if attempt > 0 {
			r = req.Clone(ctx)
			if req.Body != nil && req.Body != http.NoBody {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		resp, err := base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
			return resp, nil
		}
		d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), clk.Now(), t.MaxRetryAfter)
		if !ok {
			return resp, nil
		}
		p, pauses := t.Limiter.(Pauser)
		if pauses {
			p.PauseFor(d)
		}
		if attempt >= retries || !rewindable {
			return resp, nil
		}
		_, _ = io.CopyN(io.Discard, resp.Body, drainLimit)
		resp.Body.Close()
		if !pauses {
			start := clk.Now()
			slept := timing.Sleep(clk, d, ctx.Done())
			call.AddWait(clk.Now().Sub(start))
			if !slept {
				return nil, ctx.Err()
			}
		}
	}
}

// wait waits on the Limiter, counting the time in call.
func (t *Transport) wait(ctx context.Context, clk timing.Clock, call *callctx.Call) error {
	if !call.Counting() {
		return t.Limiter.Wait(ctx)
	}
	start := clk.Now()
	err := t.Limiter.Wait(ctx)
	call.AddWait(clk.Now().Sub(start))
	return err
}
