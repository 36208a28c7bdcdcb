package ratelimit

import (
	"fmt"
	"net/http"
	"time"
)

// A LimitError reports a response in which the server limits the client:
// 429 Too Many Requests or 503 Service Unavailable. CheckResponse returns
// it.
//
// A pacer Runner whose handler returns it (wrapped or not) takes it as the
// remote limiting every key, as pacer.PauseAll does: it pauses
// Config.Limiter for RetryAfter and retries the key after RetryAfter, or
// after its Backoff's delay when RetryAfter is 0. When the limit concerns
// one key only (a per-account quota), return
// pacer.RetryAfter(err, e.RetryAfter) instead.
type LimitError struct {
	// StatusCode is http.StatusTooManyRequests or
	// http.StatusServiceUnavailable.
	StatusCode int
	// RetryAfter is the wait the Retry-After header asked for; 0 when there
	// was none, or one that ParseRetryAfter rejects (negative, malformed,
	// or longer than DefaultMaxRetryAfter).
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	s := fmt.Sprintf("ratelimit: server answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(", retry after %v", e.RetryAfter)
	}
	return s
}

// CheckResponse returns a *LimitError when resp's status is 429 Too Many
// Requests or 503 Service Unavailable, and nil for any other status or a
// nil resp. It is how a handler hands a limit that a Transport could not
// absorb to the Runner, in one line after its status checks:
//
//	if err := ratelimit.CheckResponse(resp); err != nil {
//		return err
//	}
//
// The Retry-After header is read with HeaderRetryAfter(resp.Header, time.Now()).
// CheckResponse neither reads nor closes resp.Body.
func CheckResponse(resp *http.Response) error {
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return nil
	}
	d, _ := HeaderRetryAfter(resp.Header, time.Now())
	return &LimitError{StatusCode: resp.StatusCode, RetryAfter: d}
}
