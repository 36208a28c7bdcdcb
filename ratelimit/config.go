package ratelimit

import (
	"fmt"
	"math"
	"time"

	"github.com/benbjohnson/clock"
)

// BucketConfig configures a Bucket. The zero value of every field except
// Rate means its default.
type BucketConfig struct {
	// Rate is the number of events per second the bucket refills. It must be
	// > 0; math.Inf(1) lets every event through (pauses still hold them).
	Rate float64
	// Burst is the most events that may happen at once, the size of the
	// bucket. The default is 1.
	Burst int

	// Adaptive turns on additive-increase/multiplicative-decrease: a pause
	// that begins while no other pause is in effect multiplies the rate by
	// Decrease (never below MinRate), and once the pause is over the rate
	// climbs back by RecoverStep every RecoverEvery, up to Rate, for as long
	// as no new pause comes. Steps are applied lazily, by the next call.
	Adaptive bool
	// Decrease is the factor a pause multiplies the rate by, in (0, 1).
	// The default is 0.5.
	Decrease float64
	// MinRate is the floor of the adaptive rate, in (0, Rate]. The default
	// is Rate/10.
	MinRate float64
	// RecoverStep is how many events per second the rate gains per step,
	// > 0. The default is Rate/10.
	RecoverStep float64
	// RecoverEvery is the time between two recovery steps, > 0. The default
	// is 10 seconds.
	RecoverEvery time.Duration

	// Clock tells the time and makes timers. The default is clock.New().
	Clock clock.Clock
}

// withDefaults validates c and fills in its defaults.
func (c BucketConfig) withDefaults() (BucketConfig, error) {
	if math.IsNaN(c.Rate) || c.Rate <= 0 {
		return c, fmt.Errorf("ratelimit: BucketConfig.Rate must be > 0, got %v", c.Rate)
	}
	if c.Burst < 0 {
		return c, fmt.Errorf("ratelimit: BucketConfig.Burst must be >= 0, got %d", c.Burst)
	}
	if c.Burst == 0 {
		c.Burst = 1
	}
	if !c.Adaptive {
		return c, nil
	}
	if math.IsInf(c.Rate, 1) {
		return c, fmt.Errorf("ratelimit: BucketConfig.Rate must be finite when Adaptive, got %v", c.Rate)
	}
	if c.Decrease == 0 {
		c.Decrease = 0.5
	}
	if !(c.Decrease > 0 && c.Decrease < 1) {
		return c, fmt.Errorf("ratelimit: BucketConfig.Decrease must be in (0, 1), got %v", c.Decrease)
	}
	if c.MinRate == 0 {
		c.MinRate = c.Rate / 10
	}
	if !(c.MinRate > 0 && c.MinRate <= c.Rate) {
		return c, fmt.Errorf("ratelimit: BucketConfig.MinRate must be in (0, Rate=%v], got %v", c.Rate, c.MinRate)
	}
	if c.RecoverStep == 0 {
		c.RecoverStep = c.Rate / 10
	}
	if !(c.RecoverStep > 0) || math.IsInf(c.RecoverStep, 1) {
		return c, fmt.Errorf("ratelimit: BucketConfig.RecoverStep must be > 0, got %v", c.RecoverStep)
	}
	if c.RecoverEvery == 0 {
		c.RecoverEvery = 10 * time.Second
	}
	if c.RecoverEvery < 0 {
		return c, fmt.Errorf("ratelimit: BucketConfig.RecoverEvery must be > 0, got %v", c.RecoverEvery)
	}
	return c, nil
}

// KeyedConfig configures a Keyed limiter: one bucket per key, all alike.
type KeyedConfig struct {
	// Rate is the number of events per second each key's bucket refills,
	// in [1e-9, 1e9].
	Rate float64
	// Burst is the size of each key's bucket. The default is 1.
	Burst int
	// IdleTTL is how long a key's bucket is kept once it is full again (and
	// no longer paused); after that it is dropped, which costs nothing since
	// a new bucket starts full. The default is 1 minute.
	IdleTTL time.Duration
	// Clock tells the time and makes timers. The default is clock.New().
	Clock clock.Clock
}

func (c KeyedConfig) withDefaults() (KeyedConfig, error) {
	if !(c.Rate >= 1e-9 && c.Rate <= 1e9) {
		return c, fmt.Errorf("ratelimit: KeyedConfig.Rate must be in [1e-9, 1e9], got %v", c.Rate)
	}
	if c.Burst < 0 {
		return c, fmt.Errorf("ratelimit: KeyedConfig.Burst must be >= 0, got %d", c.Burst)
	}
	if c.Burst == 0 {
		c.Burst = 1
	}
	if float64(c.Burst)/c.Rate > 1<<62/1e9 { // a full refill must fit in int64 nanoseconds
		return c, fmt.Errorf("ratelimit: KeyedConfig.Burst must be at most Rate*%.0fs, got %d", 1<<62/1e9, c.Burst)
	}
	if c.IdleTTL < 0 {
		return c, fmt.Errorf("ratelimit: KeyedConfig.IdleTTL must be >= 0, got %v", c.IdleTTL)
	}
	if c.IdleTTL == 0 {
		c.IdleTTL = time.Minute
	}
	return c, nil
}
