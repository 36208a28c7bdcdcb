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
// retries a 429/503 with Retry-After up to 3 times. A 429 or 503 it
// returns can be turned into an error with CheckResponse.
//
// Inside a pacer Runner's handler (for requests made with the handler's
// ctx, or a ctx derived from it), the time each attempt waits on Limiter,
// or sleeps a Retry-After, adds to the Runner's Stats.RateLimitWait. When
// Limiter is also the Runner's Config.Limiter (the same value: the same
// *Bucket, or Keyed.For of the same key), the first request of the call
// goes out on the token the Runner took before the call instead of waiting
// for another (unless a Bucket was paused since, which voids the token);
// later requests wait as usual. So a call that makes n requests spends n tokens, or one if it
// makes none. Limiters that cannot be compared, such as All's, are never
// the same.
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
		if t.Limiter != nil && !(attempt == 0 && t.paid(call)) {
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

// paid reports whether the request may go out on the token that the
// Runner took from the same Limiter before the call. A pause that began
// since voids that token, as it voids every token reserved before it.
func (t *Transport) paid(call *callctx.Call) bool {
	if !call.TakePaid(t.Limiter) {
		return false
	}
	b, ok := t.Limiter.(*Bucket)
	return !ok || !b.pausedAt(b.now())
}
