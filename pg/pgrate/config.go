package pgrate

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer/internal/timing"
)

// DefaultSchema is the Schema of a config that leaves it empty.
const DefaultSchema = "pacer_rate"

// DefaultSweepEvery is the SweepEvery of a KeyedConfig that leaves it 0.
const DefaultSweepEvery = 10 * time.Second

// The bounds of Rate. Times are whole microseconds of the server's clock,
// so the interval between two events is 1/Rate rounded to the
// microsecond, at least one; at the low end a full bucket must refill
// within maxSpan.
const (
	MinRate = 1e-9
	MaxRate = 1e6
)

// maxSpan is the longest time the statements handle, in microseconds
// (about 35 years): a full bucket's refill and a pause are capped to it,
// far from the limits of timestamptz and of time.Duration.
const maxSpan = 1 << 50

// BucketConfig configures a Bucket: one bucket shared by every Bucket on
// the same database with the same Schema and Name.
type BucketConfig struct {
	// Rate is the number of events per second, shared by every instance,
	// in [MinRate, MaxRate]. It is required.
	Rate float64
	// Burst is the most events that may happen at once, the size of the
	// bucket. The default is 1.
	Burst int
	// Name says which shared bucket this is, e.g. "notion". It is
	// required; any bytes will do.
	Name string
	// Schema is the PostgreSQL schema that holds the buckets' table, made
	// by NewBucket if missing (see the package doc). It must be an
	// identifier: a letter or underscore, then letters, digits or
	// underscores, 63 bytes at most. It is quoted, so case matters. The
	// default is DefaultSchema.
	Schema string
	// FailOpen says what Allow answers when PostgreSQL cannot be reached:
	// false (the default) refuses the event, true lets it through. Wait
	// returns the error either way. See the package doc.
	FailOpen bool
}

// KeyedConfig configures a Keyed limiter: one bucket per key, all alike,
// shared by every Keyed on the same database with the same Schema and
// Name.
type KeyedConfig struct {
	// Rate is the number of events per second of each key, shared by every
	// instance, in [MinRate, MaxRate]. It is required.
	Rate float64
	// Burst is the size of each key's bucket. The default is 1.
	Burst int
	// Name says which set of buckets this is, e.g. "accounts". It is
	// required; any bytes will do. A Keyed never shares a row with a
	// Bucket of the same Name.
	Name string
	// Schema is as in BucketConfig.
	Schema string
	// FailOpen is as in BucketConfig, for every key.
	FailOpen bool
	// SweepEvery is how often a Keyed value deletes the rows of idle keys:
	// the first call of Allow, Wait or TakeKey (of the Keyed or of a
	// KeyLimiter from it) after SweepEvery has passed since the last sweep
	// runs one, a statement that reads at most SweepBatch rows (see the
	// package doc).
	// The default is DefaultSweepEvery; a negative value turns sweeping
	// off (Keyed.Sweep still works).
	SweepEvery time.Duration
}

// SweepBatch is the most rows one sweep reads; see the package doc.
const SweepBatch = 1000

// identifier is what Schema must look like.
var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// shape is what a BucketConfig or a KeyedConfig turns into once
// validated: what every bucket of a Bucket or a Keyed shares.
type shape struct {
	name     string // Name, for errors
	nameArg  []byte // Name, as the statements take it
	keyed    bool
	failOpen bool

	// The microseconds between two events (interval) and of a full bucket
	// (span, Burst * interval), as the statements take them.
	interval, span time.Duration

	schema string   // Schema, quoted
	q      *queries // the statements, in the schema

	// The local clock, for sleeping and for the pauses a process knows
	// of; the bucket's own time is the server's.
	clk   timing.Clock
	nanos timing.Nanos
}

func (c BucketConfig) shape() (*shape, error) {
	return newShape("BucketConfig", c.Rate, c.Burst, c.Name, c.Schema, c.FailOpen, false)
}

func (c KeyedConfig) shape() (*shape, error) {
	return newShape("KeyedConfig", c.Rate, c.Burst, c.Name, c.Schema, c.FailOpen, true)
}

// newShape validates the fields of the config called typ, naming the
// first one that is not valid, and fills in the defaults.
func newShape(typ string, rate float64, burst int, name, schema string, failOpen, keyed bool) (*shape, error) {
	if !(rate >= MinRate && rate <= MaxRate) {
		return nil, fmt.Errorf("pgrate: %s.Rate must be in [%g, %g], got %v", typ, MinRate, MaxRate, rate)
	}
	if burst < 0 {
		return nil, fmt.Errorf("pgrate: %s.Burst must be >= 0, got %d", typ, burst)
	}
	if burst == 0 {
		burst = 1
	}
	interval := max(int64(math.Round(1e6/rate)), 1)
	if int64(burst) > maxSpan/interval {
		return nil, fmt.Errorf("pgrate: %s.Burst must be at most %d at Rate %v (a full bucket must refill within %v), got %d",
			typ, maxSpan/interval, rate, time.Duration(maxSpan)*time.Microsecond, burst)
	}
	if name == "" {
		return nil, fmt.Errorf("pgrate: %s.Name is required", typ)
	}
	if schema == "" {
		schema = DefaultSchema
	}
	if !identifier.MatchString(schema) || len(schema) > 63 {
		return nil, fmt.Errorf("pgrate: %s.Schema %q is not an identifier of at most 63 bytes (a letter or _, then letters, digits or _)", typ, schema)
	}
	clk := timing.Real{}
	quoted := pgx.Identifier{schema}.Sanitize()
	return &shape{
		schema:   quoted,
		name:     name,
		nameArg:  []byte(name),
		keyed:    keyed,
		failOpen: failOpen,
		interval: time.Duration(interval) * time.Microsecond,
		span:     time.Duration(int64(burst)*interval) * time.Microsecond,
		q:        newQueries(quoted),
		clk:      clk,
		nanos:    timing.NewNanos(clk),
	}, nil
}

// microsUp returns d > 0 rounded up to whole microseconds, so that a
// pause is never shortened, at most maxSpan.
func microsUp(d time.Duration) time.Duration {
	if d >= maxSpan*time.Microsecond {
		return maxSpan * time.Microsecond
	}
	return (d + time.Microsecond - 1).Truncate(time.Microsecond)
}

// microsDown returns d >= 0 rounded down to whole microseconds, so that a
// wait allowed within d never ends after it, at most maxSpan.
func microsDown(d time.Duration) time.Duration {
	return min(d.Truncate(time.Microsecond), maxSpan*time.Microsecond)
}

// migrate makes sure that pool's database has the schema and its table;
// see package doc.
func (s *shape) migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if err := migrate(ctx, pool, s.schema); err != nil {
		return fmt.Errorf("pgrate: schema %s: %w", s.schema, err)
	}
	return nil
}
