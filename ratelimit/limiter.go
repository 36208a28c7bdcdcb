package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// ErrWouldExceedDeadline is returned at once, with nothing taken, by a Wait
// whose token would only come after its ctx's deadline. It wraps
// context.DeadlineExceeded, so errors.Is(err, context.DeadlineExceeded)
// holds for it.
var ErrWouldExceedDeadline = fmt.Errorf("ratelimit: wait would exceed context deadline: %w", context.DeadlineExceeded)

// Limiter paces events: Wait blocks until one event may happen.
//
// Wait returns nil when the event may happen, ctx.Err() when ctx ends first
// (giving back anything it reserved), or an error when the event could never
// happen in time (ErrWouldExceedDeadline when it could not come before ctx's deadline).
type Limiter interface {
	Wait(ctx context.Context) error
}

// Pauser is a limiter that can be told to hold every event for a while, as
// a server's Retry-After asks. Transport pauses its Limiter through it.
//
// PauseFor holds every current and future waiter for d from now on the
// limiter's own clock. A later pause extends an earlier one; an earlier one
// never shortens it; d <= 0 does nothing.
type Pauser interface {
	PauseFor(d time.Duration)
}

var (
	_ Limiter = (*Bucket)(nil)
	_ Pauser  = (*Bucket)(nil)
)

var (
	_ reserver = (*Bucket)(nil)
	_ reserver = KeyLimiter[string]{}
	_ Pauser   = KeyLimiter[string]{}
)
