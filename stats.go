package pacer

import (
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/internal/jsonfield"
)

// Stats is a snapshot of a Runner's state and counters, from Runner.Stats.
// Gauges describe the moment of the call; counters only grow.
//
// With a Config.Store the gauges describe the engine's queue, and so every
// Runner that shares it, and the engine does not count apart the values
// out on a lease: Values and Queued are then both every value stored
// (debouncing, ready, leased, delayed or held), and InFlight counts the
// leased keys. The counters are always this Runner's own.
//
// In JSON every field is present, named as its tag says, and the
// durations are numbers of seconds:
//
//	{"values":3,"queued":1,...,"debounce_seconds":5,"rate_limit_wait_seconds":5.202027777}
type Stats struct {
	// Gauges.
	Values   int           `json:"values"`           // values the Runner holds: debouncing, queued or being handled (the level Config.MaxValues bounds)
	Queued   int           `json:"queued"`           // values in the queue and not being handled: ready, behind a batch in flight, waiting for a retry or their time (AddAfter), or held
	InFlight int           `json:"in_flight"`        // batches being handled (including waiting for the window or the Limiter)
	Pending  int           `json:"pending"`          // keys whose debounce is still collecting values
	Held     int           `json:"held"`             // keys held after using up their attempts, waiting for Release
	Retrying int           `json:"retrying"`         // keys whose batch failed and waits for its retry
	Blocked  int           `json:"blocked"`          // values queued behind the batches of Retrying keys, which wait for them
	Dead     int           `json:"dead"`             // dead letters the Config.Store keeps (0 without a Store)
	Debounce time.Duration `json:"debounce_seconds"` // the current quiet period; with Adaptive, its target (see Adaptive)

	// Counters.
	Received      uint64        `json:"received"`                // values accepted by Add
	Handled       uint64        `json:"handled"`                 // values whose handler call succeeded
	Batches       uint64        `json:"batches"`                 // handler calls, retries included
	Reruns        uint64        `json:"reruns"`                  // times a key went back to the queue with values left behind the batch just ended
	Retries       uint64        `json:"retries"`                 // failed handler calls that will be retried
	Dropped       uint64        `json:"dropped"`                 // values given up (OnDrop)
	Refused       uint64        `json:"refused"`                 // values Add refused with ErrFull (Config.MaxValues)
	RateLimitWait time.Duration `json:"rate_limit_wait_seconds"` // total time waited for rate limits: for Config.Limiter before calls, for a ratelimit.Transport's Limiter or Retry-After in them
	KeyLimited    uint64        `json:"key_limited"`             // batches deferred because their key had no token (Config.KeyLimit; Config.KeyRate without a Store: a store's own deferrals show in its Inspector)
	KeyWindowed   uint64        `json:"key_windowed"`            // batches deferred, or cut short, because their key was outside its window (Config.KeyWindow)
}

// statsFields has the fields and tags of Stats but not its JSON methods.
type statsFields Stats

// statsJSON is the JSON of Stats: its durations in seconds replace the
// embedded nanoseconds, which encoding/json leaves behind as deeper fields
// of the same name.
type statsJSON struct {
	*statsFields
	Debounce      jsonfield.Seconds `json:"debounce_seconds"`
	RateLimitWait jsonfield.Seconds `json:"rate_limit_wait_seconds"`
}

// MarshalJSON writes s as the Stats doc shows.
func (s Stats) MarshalJSON() ([]byte, error) {
	return json.Marshal(statsJSON{(*statsFields)(&s), jsonfield.Seconds(s.Debounce), jsonfield.Seconds(s.RateLimitWait)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Stats) UnmarshalJSON(b []byte) error {
	j := statsJSON{(*statsFields)(s), jsonfield.Seconds(s.Debounce), jsonfield.Seconds(s.RateLimitWait)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	s.Debounce, s.RateLimitWait = time.Duration(j.Debounce), time.Duration(j.RateLimitWait)
	return nil
}

// counters are the Runner's monotonic counters; the gauges come from the
// engine when Stats is called.
type counters struct {
	received, handled, batches atomic.Uint64
	reruns, retries, dropped   atomic.Uint64
	refused                    atomic.Uint64
	keyLimited, keyWindowed    atomic.Uint64
	rateWait                   atomic.Int64 // nanoseconds
}
