package pacer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pacerkit/pacer/internal/callctx"
	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
)

// ErrClosed is returned by Add after Shutdown began, and by Run after the
// Runner was shut down, as net/http's ErrServerClosed is after
// Server.Shutdown. It is also the cause of a handler's ctx that a Shutdown
// whose own ctx expired cut short, and batches that such a Shutdown could
// not finish are handed to OnDrop with an error that wraps it.
//
// It is the Runner's own. Every package of pacer that stops accepting work
// has its ErrClosed (debounce, fifo, store, redis/redismutex), as net has
// net.ErrClosed and net/http ErrServerClosed, and tells its callers only
// its own: the closed errors of the packages a Runner is built on never
// reach its callers, who test for this one alone. A Runner whose
// [Config.Store] was closed under it returns the engine's error, which
// wraps [store.ErrClosed].
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

// RetryAfter marks err as "try this key again after d": the key waits d
// before its batch is retried, instead of the Backoff's delay, while other
// keys go on. It concerns this key only and never pauses the Limiter: use
// it for a receiver that is down or a retry schedule of the handler's own.
// With a Config.KeyLimit, it also pauses the key's bucket there for d, so
// that every user of that limit holds the key.
// When the remote limits every caller (a 429 or 503 from a shared API),
// return PauseAll, or the error of ratelimit.CheckResponse, instead. The
// call counts as a failed attempt. RetryAfter(nil, d) is nil.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: max(d, 0)}
}

// PauseAll marks err as "the remote is limiting all of us": the Runner
// pauses Config.Limiter for d, so that no key starts a call before the
// pause ends, and retries this key after d (the pause holds even when this
// was the batch's last attempt). The Limiter must be able to
// pause (have a PauseFor(time.Duration) method, as ratelimit.Bucket has);
// otherwise only this key waits. With Adaptive, each PauseAll also
// lengthens the quiet period. The call counts as a failed attempt.
// PauseAll(nil, d) is nil.
//
// A handler error that wraps a *ratelimit.LimitError (see
// ratelimit.CheckResponse) is taken as PauseAll(err, e.RetryAfter), except
// that the key retries after the Backoff's delay when e.RetryAfter is 0.
func PauseAll(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: max(d, 0), all: true}
}

type retryAfterError struct {
	err   error
	after time.Duration
	all   bool // PauseAll
}

func (e *retryAfterError) Error() string {
	if e.all {
		return fmt.Sprintf("pause all for %v: %v", e.after, e.err)
	}
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

// classify sorts a handler error into the Runner's outcomes: drop it
// (permanent), retry it after a delay the handler chose (hasAfter) or after
// the Backoff's, and pause the Limiter for every key (pause). The
// handler's own RetryAfter or PauseAll wins over a *ratelimit.LimitError it
// wraps.
func classify(err error) (permanent bool, after time.Duration, hasAfter, pause bool) {
	var p *permanentError
	if errors.As(err, &p) {
		return true, 0, false, false
	}
	var ra *retryAfterError
	if errors.As(err, &ra) {
		return false, ra.after, true, ra.all
	}
	var le *ratelimit.LimitError
	if errors.As(err, &le) {
		return false, le.RetryAfter, le.RetryAfter > 0, true
	}
	return false, 0, false, false
}

// Attempt returns the attempt number of the batch being handled: 1 on the
// first call, 2 on the first retry, and so on. It returns 0 for a ctx that
// did not come from a Runner. A handler can use it to choose its own delay,
// e.g. fast retries first and slow ones later via RetryAfter.
func Attempt(ctx context.Context) int {
	if c := callctx.From(ctx); c != nil {
		return int(c.Attempt)
	}
	return 0
}

// ErrFull is returned by Add when the Runner already holds
// Config.MaxValues values, or, with a Config.Store, when the Runner's
// queue stores that many for every instance together (and then by AddTx
// too): the value was not accepted. A webhook can answer 429 or 503 with
// it and let the sender retry. ErrFull wraps store.ErrFull, which the
// engine returns.
var ErrFull error = fullError{}

type fullError struct{}

func (fullError) Error() string { return "pacer: runner full" }
func (fullError) Unwrap() error { return store.ErrFull }

// ErrLeaseLost is the cause of a handler's ctx cancelled because the
// Runner lost the lease of its batch: the Config.Store refused to renew it
// (it lapsed, or another holder has the key now), or no renewal succeeded
// before the lease's deadline on the Runner's own clock (see
// Config.LeaseTTL), whether the renewals failed or did not answer. The
// Runner then reports no outcome for the batch: its next holder runs it,
// as the next attempt. A handler that writes elsewhere guards its writes
// with Fence. ErrLeaseLost wraps store.ErrLeaseLost. It is also wrapped in
// the error a batch is dropped or held with when its last attempt's lease
// lapsed, its holder having died.
var ErrLeaseLost error = engine.ErrLeaseLost

// ErrUndecodable is wrapped in the error a batch is dropped with when some
// of its stored values, or its key, no longer decode with the Runner's
// codecs (Config.Codec, Config.KeyCodec): the store keeps the batch as a
// dead letter, as it was stored, and OnDrop gets the values that decoded.
var ErrUndecodable = engine.ErrUndecodable
