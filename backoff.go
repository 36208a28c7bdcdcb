package pacer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Backoff says how the Runner retries a batch whose handler returned an
// ordinary error (neither Permanent nor RetryAfter). The n-th retry waits
// min(Max, Initial*Multiplier^(n-1)), of which a random fraction up to Jitter
// is taken off. The growth saturates at Max instead of overflowing, so a Max
// of math.MaxInt64 means "wait forever" and never wraps round to a negative
// wait. Zero fields take their defaults.
type Backoff struct {
	// Initial is the wait before the first retry. The default is 1 second.
	Initial time.Duration
	// Max caps every wait. The default is 5 minutes.
	Max time.Duration
	// Multiplier grows the wait from one retry to the next; it must be >= 1.
	// The default is 2.
	Multiplier float64
	// Jitter is the fraction of each wait that is randomised, from 0 (none,
	// the default) to 1 ("full jitter": uniform in (0, wait]). Jitter spreads
	// the retries of many keys that failed together.
	Jitter float64
	// Attempts is the most handler calls one batch gets, the first included;
	// when they are used up the batch is dropped or its key held, as
	// Config.Exhausted says. The default 0 means 25, as job queues commonly
	// use: with the default waits that is about 84 minutes of retries.
	// Unlimited retries until the handler succeeds or returns Permanent; in
	// strict mode (MaxBatch 1) a value that always fails then blocks its
	// key for ever, which Stats.Retrying and Stats.Blocked show. A retried
	// batch holds the same values; values that arrived meanwhile wait for
	// the next batch, with attempts of their own.
	Attempts int
}

// Unlimited, as Backoff.Attempts, retries a batch until it succeeds or the
// handler returns Permanent.
const Unlimited = -1

// defaultAttempts is what Backoff.Attempts 0 means.
const defaultAttempts = 25

func (b Backoff) withDefaults() Backoff {
	if b.Initial == 0 {
		b.Initial = time.Second
	}
	if b.Max == 0 {
		b.Max = 5 * time.Minute
	}
	if b.Multiplier == 0 {
		b.Multiplier = 2
	}
	if b.Attempts == 0 {
		b.Attempts = defaultAttempts
	}
	return b
}

func (b Backoff) validate() error {
	switch {
	case b.Initial < 0:
		return fmt.Errorf("pacer: Config.Retry.Initial must be >= 0, got %v", b.Initial)
	case b.Max < 0:
		return fmt.Errorf("pacer: Config.Retry.Max must be >= 0, got %v", b.Max)
	case b.Multiplier != 0 && !(b.Multiplier >= 1):
		return fmt.Errorf("pacer: Config.Retry.Multiplier must be >= 1, got %v", b.Multiplier)
	case !(b.Jitter >= 0 && b.Jitter <= 1):
		return fmt.Errorf("pacer: Config.Retry.Jitter must be in [0, 1], got %v", b.Jitter)
	case b.Attempts < Unlimited:
		return fmt.Errorf("pacer: Config.Retry.Attempts must be >= 0 or Unlimited (-1), got %d", b.Attempts)
	}
	return nil
}

// Delay returns the wait before retry number n (1 for the first retry),
// jitter included. Zero fields take their defaults.
func (b Backoff) Delay(n int) time.Duration {
	return b.withDefaults().delay(n, rand.Float64())
}

// delay is Delay with the random draw r in [0, 1) passed in. The result is
// in [0, Max] whatever the fields and n: the growth is computed in float64,
// which saturates to +Inf instead of wrapping, and is compared with Max
// before it is converted back, because float64(math.MaxInt64) is 2^63, one
// more than any Duration.
func (b Backoff) delay(n int, r float64) time.Duration {
	d := max(b.Max, 0)
	f := float64(b.Initial) * math.Pow(b.Multiplier, float64(max(n, 1)-1))
	if f < float64(d) { // false for NaN and +Inf
		// f < float64(d) also bounds f by d itself, the float64 just below
		// float64(d) being <= d, so the conversion cannot overflow.
		d = min(time.Duration(max(f, 0)), d)
	}
	// Jitter takes off a fraction j of d. For j < 1, float64(d)*j is at
	// most 2^63-1024, so it converts back safely; a NaN takes nothing off.
	switch j := b.Jitter * r; {
	case j >= 1:
		d = 0
	case j > 0:
		d -= time.Duration(float64(d) * j)
	}
	return max(d, 0)
}
