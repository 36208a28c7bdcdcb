package pacer

import (
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a Runner's state and counters, from Runner.Stats.
// Gauges describe the moment of the call; counters only grow.
//
// With a Config.Store the gauges describe the engine's queue, and so every
// Runner that shares it, and the engine does not count apart the values
// out on a lease: Values and Queued are then both every value stored
// (debouncing, ready, leased, delayed or held), and InFlight counts the
// leased keys. The counters are always this Runner's own.
type Stats struct {
	// Gauges.
	Values   int           // values the Runner holds: debouncing, queued or being handled (the level Config.MaxValues bounds)
	Queued   int           // values in the queue and not being handled: ready, behind a batch in flight, waiting for a retry, or held
	InFlight int           // batches being handled (including waiting for the window or the Limiter)
	Pending  int           // keys whose debounce is still collecting values
	Held     int           // keys held after using up their attempts, waiting for Release
	Retrying int           // keys whose batch failed and waits for its retry
	Blocked  int           // values queued behind the batches of Retrying keys, which wait for them
	Dead     int           // dead letters the Config.Store keeps (0 without a Store)
	Debounce time.Duration // the current quiet period; with Adaptive, its target (see Adaptive)

	// Counters.
	Received      uint64        // values accepted by Add
	Handled       uint64        // values whose handler call succeeded
	Batches       uint64        // handler calls, retries included
	Reruns        uint64        // times a key went back to the queue with values left behind the batch just ended
	Retries       uint64        // failed handler calls that will be retried
	Dropped       uint64        // values given up (OnDrop)
	Refused       uint64        // values Add refused with ErrFull (Config.MaxValues)
	RateLimitWait time.Duration // total time waited for rate limits: for Config.Limiter before calls, for a ratelimit.Transport's Limiter or Retry-After in them
}

// counters are the Runner's monotonic counters; the gauges come from the
// engine when Stats is called.
type counters struct {
	received, handled, batches atomic.Uint64
	reruns, retries, dropped   atomic.Uint64
	refused                    atomic.Uint64
	rateWait                   atomic.Int64 // nanoseconds
}
