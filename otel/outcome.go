package pacerotel

import (
	"context"
	"errors"
	"reflect"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/window"
)

// An Outcome is what the Runner does with a batch after a handler call,
// the pacer.outcome attribute of its span and of pacer.batch.duration.
type Outcome uint8

const (
	// OutcomeOK: the handler succeeded; the batch is acknowledged.
	OutcomeOK Outcome = iota
	// OutcomeRetry: the call failed and the batch will be tried again
	// (after the backoff, or the delay of pacer.RetryAfter or
	// pacer.PauseAll); a panic counts as a failure.
	OutcomeRetry
	// OutcomeDropped: the batch is given up: the error was
	// pacer.Permanent, or the call was the last attempt and the Runner
	// drops exhausted batches.
	OutcomeDropped
	// OutcomeHeld: the call was the last attempt and the Runner holds the
	// key (pacer.ExhaustedHold) until Release.
	OutcomeHeld
	// OutcomeLeaseLost: the Runner lost the batch's lease during the call
	// (pacer.ErrLeaseLost): its next holder runs it again.
	OutcomeLeaseLost
	// OutcomeDeferred: the call was cut short, not by its own fault, and
	// the batch goes back to its key without using an attempt: the
	// delivery window closed, Run's ctx ended, or a Shutdown gave up.
	OutcomeDeferred

	outcomeCount = iota
)

var outcomeNames = [outcomeCount]string{"ok", "retry", "dropped", "held", "lease_lost", "deferred"}

// String returns the value of the pacer.outcome attribute, e.g. "retry".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// outcome tells what the Runner does after a call of the given attempt,
// run with ctx, that returned err. It follows the Runner's own order: a
// lost lease first, then success, a call cut short, pacer.Permanent, the
// last attempt.
func (t *Telemetry[K, V]) outcome(ctx context.Context, attempt int, err error) Outcome {
	var cause error
	if ctx.Err() != nil {
		cause = context.Cause(ctx)
	}
	switch {
	case errors.Is(cause, pacer.ErrLeaseLost):
		return OutcomeLeaseLost
	case err == nil:
		return OutcomeOK
	case cause != nil && !errors.Is(cause, window.ErrOutside):
		return OutcomeDeferred // Run's ctx ended, or a Shutdown gave up
	case isPermanent(err):
		return OutcomeDropped
	case cause != nil:
		return OutcomeDeferred // the window closed
	case t.attempts != pacer.Unlimited && attempt >= t.attempts:
		if t.hold {
			return OutcomeHeld
		}
		return OutcomeDropped
	}
	return OutcomeRetry
}

// permanentType is the type of the errors pacer.Permanent returns, which
// pacer does not export: taken from one of them, it stays right whatever
// the type is named.
var permanentType = reflect.TypeOf(pacer.Permanent(errors.New("")))

// isPermanent reports whether err wraps an error of pacer.Permanent, as
// the Runner's own errors.As does.
func isPermanent(err error) bool {
	return errors.As(err, reflect.New(permanentType).Interface())
}
