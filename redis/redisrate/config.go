package redisrate

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/redis/internal/redisname"
)

// DefaultPrefix is the Prefix of a config that leaves it empty.
const DefaultPrefix = "pacer"

// The bounds of Rate. The functions count whole microseconds, so the
// interval between two events is 1/Rate rounded to the microsecond, at
// least one; at the low end a full bucket must refill within maxSpan.
const (
	MinRate = 1e-9
	MaxRate = 1e6
)

// maxSpan is the longest time the functions handle, in microseconds (about
// 35 years): a full bucket's refill and a pause are capped to it, so that
// every time it computes stays an exact integer in a Lua number (53 bits).
const maxSpan = 1 << 50

// BucketConfig configures a Bucket: one bucket shared by every Bucket on the
// same Redis with the same Prefix and Name.
type BucketConfig struct {
	// Rate is the number of events per second, shared by every instance,
	// in [MinRate, MaxRate]. It is required.
	Rate float64
	// Burst is the most events that may happen at once, the size of the
	// bucket. The default is 1.
	Burst int
	// Name says which shared bucket this is, e.g. "notion". It is required
	// and must not contain a brace.
	Name string
	// Prefix starts the name of every Redis key: the keys are
	// "{Prefix:rate:Name}:tat" and "{Prefix:rate:Name}:pause", in the name
	// encoding of the package doc, so that buckets of different Prefix or
	// Name share none, whatever bytes they hold. It must not contain a
	// brace. The default is DefaultPrefix.
	Prefix string
	// FailOpen says what Allow answers when Redis cannot be reached: false
	// (the default) refuses the event, true lets it through. Wait returns
	// the error either way. See the package doc.
	FailOpen bool
}

// KeyedConfig configures a Keyed limiter: one bucket per key, all alike,
// shared by every Keyed on the same Redis with the same Prefix and Name.
type KeyedConfig struct {
	// Rate is the number of events per second of each key, shared by every
	// instance, in [MinRate, MaxRate]. It is required.
	Rate float64
	// Burst is the size of each key's bucket. The default is 1.
	Burst int
	// Name says which set of buckets this is, e.g. "accounts". It is
	// required and must not contain a brace.
	Name string
	// Prefix starts the name of every Redis key: a key's are
	// "{Prefix:rate:Name}:tat:" and "{Prefix:rate:Name}:pause:" followed by
	// the key, in the name encoding of the package doc. It must not
	// contain a brace. The default is DefaultPrefix.
	Prefix string
	// FailOpen is as in BucketConfig, for every key.
	FailOpen bool
}

// shape is what a BucketConfig or a KeyedConfig turns into once validated: what
// every bucket of a Bucket or a Keyed shares.
type shape struct {
	name     string // Name, for errors
	tag      string // "{Prefix:rate:Name}:" in the name encoding, which starts every key
	failOpen bool

	// The arguments of the functions, boxed once: the microseconds between
	// two events (interval) and of a full bucket (span, Burst * interval).
	intervalArg, spanArg any

	// The local clock, for sleeping and for the pauses a process knows
	// of; the bucket's own time is the server's.
	clk   timing.Clock
	nanos timing.Nanos
}

func (c BucketConfig) shape() (*shape, error) {
	return newShape("BucketConfig", c.Rate, c.Burst, c.Name, c.Prefix, c.FailOpen)
}

func (c KeyedConfig) shape() (*shape, error) {
	return newShape("KeyedConfig", c.Rate, c.Burst, c.Name, c.Prefix, c.FailOpen)
}

// newShape validates the fields of the config called typ, naming the first
// one that is not valid, and fills in the defaults.
func newShape(typ string, rate float64, burst int, name, prefix string, failOpen bool) (*shape, error) {
	if !(rate >= MinRate && rate <= MaxRate) {
		return nil, fmt.Errorf("redisrate: %s.Rate must be in [%g, %g], got %v", typ, MinRate, MaxRate, rate)
	}
	if burst < 0 {
		return nil, fmt.Errorf("redisrate: %s.Burst must be >= 0, got %d", typ, burst)
	}
	if burst == 0 {
		burst = 1
	}
	interval := max(int64(math.Round(1e6/rate)), 1)
	if int64(burst) > maxSpan/interval {
		return nil, fmt.Errorf("redisrate: %s.Burst must be at most %d at Rate %v (a full bucket must refill within %v), got %d",
			typ, maxSpan/interval, rate, time.Duration(maxSpan)*time.Microsecond, burst)
	}
	if name == "" {
		return nil, fmt.Errorf("redisrate: %s.Name is required", typ)
	}
	if strings.ContainsAny(name, "{}") {
		return nil, fmt.Errorf("redisrate: %s.Name %q has a brace, which would break the hash tag", typ, name)
	}
	if prefix == "" {
		prefix = DefaultPrefix
	}
	if strings.ContainsAny(prefix, "{}") {
		return nil, fmt.Errorf("redisrate: %s.Prefix %q has a brace, which would break the hash tag", typ, prefix)
	}
	span := int64(burst) * interval
	clk := timing.Real{}
	return &shape{
		name:        name,
		tag:         redisname.KeyPrefix(prefix, "rate", name),
		failOpen:    failOpen,
		intervalArg: interval,
		spanArg:     span,
		clk:         clk,
		nanos:       timing.NewNanos(clk),
	}, nil
}

// limiterKeys returns the names of a Bucket's tat and pause keys.
func (s *shape) limiterKeys() (tat, pause string) { return s.tag + "tat", s.tag + "pause" }

// keyedKeys returns the names of the tat and pause keys of a Keyed's key.
func (s *shape) keyedKeys(key string) (tat, pause string) {
	return s.tag + "tat:" + key, s.tag + "pause:" + key
}

// microsUp returns d > 0 in whole microseconds, rounded up so that a
// pause is never shortened, at most maxSpan.
func microsUp(d time.Duration) int64 {
	if d >= maxSpan*time.Microsecond {
		return maxSpan
	}
	return int64((d + time.Microsecond - 1) / time.Microsecond)
}

// microsDown returns d >= 0 in whole microseconds, rounded down so that a
// wait allowed within d never ends after it, at most maxSpan.
func microsDown(d time.Duration) int64 {
	return min(int64(d/time.Microsecond), maxSpan)
}
