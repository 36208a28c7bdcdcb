package pacer

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrClosed is returned by Add after Shutdown began, and by Run after the
// Runner was shut down. Batches that a Shutdown could not finish are handed
// to OnDrop with an error that wraps ErrClosed.
var ErrClosed = errors.New("pacer: runner closed")

// ErrRunning is returned by Run when it is called while another call of Run
// is running.
var ErrRunning = errors.New("pacer: Run called more than once")

// Permanent marks err as final: the Runner drops the batch (OnDrop, event
// EventDropped) instead of retrying it. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return "permanent: " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// RetryAfter marks err as "try again after d", as a 429 or 503 with a
// Retry-After header asks: the key waits d before its batch is retried, and
// when the configured Limiter can pause (it has a PauseFor(time.Duration)
// method, as ratelimit.Bucket does), the Limiter is paused for d too, so every
// key backs off. The call counts as a failed attempt. RetryAfter(nil, d) is nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: max(d, 0)}
}

type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string {
	return fmt.Sprintf("retry after %v: %v", e.after, e.err)
}
func (e *retryAfterError) Unwrap() error { return e.err }

// A PanicError is the error a Runner reports when the handler panicked. The
// worker recovers and lives on; the batch is retried like any other failure.
type PanicError struct {
	Value any    // what the handler panicked with
	Stack []byte // the goroutine's stack at the panic
}

func (e *PanicError) Error() string { return fmt.Sprintf("pacer: handler panicked: %v", e.Value) }

// classify sorts a handler error into the Runner's three outcomes.
func classify(err error) (permanent bool, after time.Duration, hasAfter bool) {
	var p *permanentError
	if errors.As(err, &p) {
		return true, 0, false
	}
	var ra *retryAfterError
	if errors.As(err, &ra) {
		return false, ra.after, true
	}
	return false, 0, false
}

type attemptKey struct{}

// Attempt returns the attempt number of the batch being handled: 1 on the
// first call, 2 on the first retry, and so on. It returns 0 for a ctx that
// did not come from a Runner. A handler can use it to choose its own delay,
// e.g. fast retries first and slow ones later via RetryAfter.
func Attempt(ctx context.Context) int {
	n, _ := ctx.Value(attemptKey{}).(int)
	return n
}
