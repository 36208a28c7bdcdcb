package pgrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer/ratelimit"
)

var (
	_ ratelimit.Limiter = (*KeyLimiter)(nil)
	_ ratelimit.Pauser  = (*KeyLimiter)(nil)
)

// A Keyed is a set of shared buckets, one per key, all alike: a
// per-account or per-user limit that holds across every process sharing
// its database, Schema and Name. Each key's bucket works as a Bucket's
// does, in a row of its own.
//
// A key's row exists only while it matters, give or take a sweep: a key
// whose bucket is full again and not paused has a row that a sweep
// deletes (KeyedConfig.SweepEvery, Sweep), and a key without a row is
// full. A sweep reads at most SweepBatch rows, never the whole table.
//
// A Keyed is safe for concurrent use. Use NewKeyed; the zero value is not
// usable. It owns no goroutine and nothing to close: a sweep runs in the
// call that finds it due.
type Keyed struct {
	pool    *pgxpool.Pool
	s       *shape
	sweep   *sweeper
	flights *keyFlights // of Allow and Wait
}

// NewKeyed returns a Keyed of cfg's shared buckets on pool, once it made
// sure, within ctx, that the schema holds the package's table, as
// NewBucket does; otherwise, or if cfg is not valid, an error that names
// the first invalid field, or what failed.
func NewKeyed(ctx context.Context, pool *pgxpool.Pool, cfg KeyedConfig) (*Keyed, error) {
	if pool == nil {
		return nil, errors.New("pgrate: NewKeyed needs a pool, got nil")
	}
	s, err := cfg.shape()
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx, pool); err != nil {
		return nil, err
	}
	k := &Keyed{pool: pool, s: s, sweep: newSweeper(pool, s, cfg.SweepEvery)}
	k.flights = newKeyFlights(k)
	return k, nil
}

// Allow takes one event of key if its bucket has one now and no pause of
// key is in effect; see Bucket.Allow. The Allows of a Keyed that come at
// once, whatever their keys, share round trips (see the package doc).
func (k *Keyed) Allow(ctx context.Context, key string) (bool, error) {
	b := k.bucket(key)
	return b.allow(ctx)
}

// Wait blocks until one event of key may happen; see Bucket.Wait. A
// pause of key set after Wait took its turn does not hold it (only a
// KeyLimiter's own waiters hear of its pauses).
func (k *Keyed) Wait(ctx context.Context, key string) error {
	b := k.bucket(key)
	return b.wait(ctx)
}

// PauseKey holds every event of key, in every process, for d; see
// Bucket.Pause.
func (k *Keyed) PauseKey(ctx context.Context, key string, d time.Duration) error {
	b := k.bucket(key)
	return b.pause(ctx, d)
}

// Sweep deletes, in one statement, the rows of idle buckets (full and not
// paused) among the next SweepBatch rows of the table, in the order of
// its primary key from where this Keyed's last sweep stopped; after the
// table's last row it starts again from the first. It returns how many
// rows it deleted. It sweeps the rows of every Name and of Buckets too:
// whatever the table holds. Allow, Wait and TakeKey call it every
// KeyedConfig.SweepEvery; call it yourself with sweeping turned off.
func (k *Keyed) Sweep(ctx context.Context) (int, error) {
	n, err := k.sweep.run(ctx)
	if err != nil {
		return 0, fmt.Errorf("pgrate: Sweep on %q: %w", k.s.name, err)
	}
	return n, nil
}

// For returns key's bucket as a ratelimit.Limiter and ratelimit.Pauser,
// for a pacer Config.Limiter or a ratelimit.Transport; reuse it for a key
// in use, as its pauses hold its own waiters. Each call returns a new
// value.
func (k *Keyed) For(key string) *KeyLimiter {
	kl := &KeyLimiter{}
	k.init(&kl.b, key)
	kl.b.srv = newFlights(kl.b.srv.(*remote), k.s.clk.Now) // a KeyLimiter's calls share flights, as a Bucket's do
	return kl
}

// bucket returns key's bucket for one call, whose Allow shares the
// Keyed's flights.
func (k *Keyed) bucket(key string) *bucket {
	b := &bucket{}
	k.init(b, key)
	b.srv = keyedServer{remote: b.srv.(*remote), flights: k.flights}
	return b
}

func (k *Keyed) init(b *bucket, key string) {
	b.srv = &remote{pool: k.pool, s: k.s, key: append([]byte{}, key...)}
	b.s = k.s
	b.key = key
	b.sweep = k.sweep
}

// A KeyLimiter is one key of a Keyed, with the methods of a Bucket. It
// is safe for concurrent use. Get one from Keyed.For.
type KeyLimiter struct {
	b bucket
}

// Allow is Keyed.Allow for the key; see Bucket.Allow.
func (l *KeyLimiter) Allow(ctx context.Context) (bool, error) { return l.b.allow(ctx) }

// Wait is Keyed.Wait for the key; see Bucket.Wait, which says how a pause
// set through this value holds its waiters.
func (l *KeyLimiter) Wait(ctx context.Context) error { return l.b.wait(ctx) }

// Pause is Keyed.PauseKey for the key; see Bucket.Pause.
func (l *KeyLimiter) Pause(ctx context.Context, d time.Duration) error { return l.b.pause(ctx, d) }

// PauseFor is Pause without a ctx or an error, for ratelimit.Pauser; see
// Bucket.PauseFor.
func (l *KeyLimiter) PauseFor(d time.Duration) { l.b.pauseFor(d) }

// Err returns the error of the last PauseFor, nil if it reached the server
// or if there was none.
func (l *KeyLimiter) Err() error { return l.b.err() }
