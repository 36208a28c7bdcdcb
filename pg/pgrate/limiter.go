package pgrate

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer/ratelimit"
)

var (
	_ ratelimit.Limiter = (*Bucket)(nil)
	_ ratelimit.Pauser  = (*Bucket)(nil)
)

// A Bucket controls how often an event may happen across every process
// that shares its database, Schema and Name: one bucket of
// BucketConfig.Burst events refilled at BucketConfig.Rate per second, held
// in one row of PostgreSQL and paced by GCRA on the server's clock. See
// the package doc for the guarantees, the table and the failures.
//
// Allow takes an event now or refuses, in one round trip, one statement;
// Wait waits for one, in one round trip if a token is there, two if it
// has to wait. Pause and PauseFor hold every process's
// events for a while.
//
// A Bucket is safe for concurrent use. Use NewBucket; the zero value is
// not usable. It owns no goroutine and nothing to close: the pool is the
// caller's.
type Bucket struct {
	b bucket
}

// NewBucket returns a Bucket of cfg's shared bucket on pool, once it made
// sure, within ctx, that the schema holds the package's table: it creates
// the schema and the table if missing (see the package doc), which costs
// one query when they are there. Otherwise, or if cfg is not valid, it
// returns an error that names the first invalid field, or what failed.
func NewBucket(ctx context.Context, pool *pgxpool.Pool, cfg BucketConfig) (*Bucket, error) {
	if pool == nil {
		return nil, errors.New("pgrate: NewBucket needs a pool, got nil")
	}
	s, err := cfg.shape()
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx, pool); err != nil {
		return nil, err
	}
	l := &Bucket{}
	l.b.s = s
	l.b.srv = newFlights(&remote{pool: pool, s: s, key: []byte{}}, s.clk.Now)
	return l, nil
}

// Allow takes one event if the bucket has one now and no pause is in
// effect, in one round trip, and reports whether it did. A pause set
// through this Bucket value refuses at once, without asking the server.
//
// If PostgreSQL cannot be reached, Allow returns BucketConfig.FailOpen and
// an error naming the package and the bucket; if ctx ends first, false and
// ctx.Err().
func (l *Bucket) Allow(ctx context.Context) (bool, error) { return l.b.allow(ctx) }

// Wait blocks until one event may happen. One round trip takes the
// event's token if there is one now, as Allow does; otherwise a second
// takes its turn, later, and Wait sleeps until it on a local timer, never
// asking again. It returns:
//
//   - nil when the event may happen;
//   - ratelimit.ErrWouldExceedDeadline at once, with nothing taken, if the
//     turn would come after ctx's deadline;
//   - ctx.Err() if ctx ends first (having given the turn back if it
//     safely could, see the package doc);
//   - an error naming the package and the bucket if PostgreSQL cannot be
//     reached, whatever BucketConfig.FailOpen says.
//
// A Wait whose turn falls in a pause set through this Bucket value after
// it took the turn sleeps until the pause ends, then takes another turn
// (a second round trip): no Wait of this value returns nil during a pause
// set through it.
func (l *Bucket) Wait(ctx context.Context) error { return l.b.wait(ctx) }

// Pause holds every event of the bucket, in every process, for d from now
// on the server's clock, in one round trip: Allow refuses and Wait sleeps
// until it ends. A pause only ever extends an earlier one, never shortens
// it; setting or extending one also empties the bucket, so that at most
// min(Burst, Rate·d) events pass at once when it ends. d <= 0 does
// nothing.
//
// This Bucket value holds its own Waits and Allows from the moment Pause
// is called, even if PostgreSQL cannot be reached; then Pause returns an
// error naming the package and the bucket, and other processes are not
// paused.
func (l *Bucket) Pause(ctx context.Context, d time.Duration) error { return l.b.pause(ctx, d) }

// PauseFor is Pause without a ctx or an error, for ratelimit.Pauser (so
// for ratelimit.Transport and a pacer Runner's PauseAll): its round trip
// is bounded by one second, and its error is kept for Err.
func (l *Bucket) PauseFor(d time.Duration) { l.b.pauseFor(d) }

// Err returns the error of the last PauseFor, nil if it reached the server
// or if there was none.
func (l *Bucket) Err() error { return l.b.err() }
