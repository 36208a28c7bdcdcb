package ratelimit

import (
	"context"
	"time"
)

// Limiter paces events: Wait blocks until one event may happen.
//
// Wait returns nil when the event may happen, ctx.Err() when ctx ends first
// (giving back anything it reserved), or an error when the event could never
// happen in time (for example, before ctx's deadline).
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
