package engine

// Gauges are an engine's counts, read at one instant.
type Gauges struct {
	// Values counts every value held, debouncing and leased ones
	// included; -1 when the engine does not count them (the engine in the
	// process: the Runner counts its values itself).
	Values   int
	Queued   int // values not out on a lease
	InFlight int // leases out
	Pending  int // keys whose burst debounces
	Held     int // held keys
	Retrying int // keys waiting for a Retry delay
	Blocked  int // values behind the retried batches of those keys
	Dead     int // dead letters kept
}
