package pacer_test

import (
	"encoding/json"
	"os"
	"time"

	"github.com/pacerkit/pacer"
)

// Stats as a /stats endpoint shows them: snake_case names, and durations
// as numbers of seconds, last.
func ExampleStats_json() {
	st := pacer.Stats{ // as Runner.Stats returns them
		Values: 12, Queued: 9, InFlight: 1, Pending: 2, Retrying: 1, Blocked: 3,
		Debounce: 5 * time.Second,
		Received: 478, Handled: 466, Batches: 61, Reruns: 4, Retries: 2,
		RateLimitWait: 5202027777,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		panic(err)
	}
	// Output:
	// {
	//   "values": 12,
	//   "queued": 9,
	//   "in_flight": 1,
	//   "pending": 2,
	//   "held": 0,
	//   "retrying": 1,
	//   "blocked": 3,
	//   "dead": 0,
	//   "received": 478,
	//   "handled": 466,
	//   "batches": 61,
	//   "reruns": 4,
	//   "retries": 2,
	//   "dropped": 0,
	//   "refused": 0,
	//   "key_limited": 0,
	//   "key_windowed": 0,
	//   "debounce_seconds": 5,
	//   "rate_limit_wait_seconds": 5.202027777
	// }
}
