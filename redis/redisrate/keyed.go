package redisrate

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/internal/flight"
	"github.com/pacerkit/pacer/ratelimit"
)

var (
	_ ratelimit.Limiter = (*KeyLimiter)(nil)
	_ ratelimit.Pauser  = (*KeyLimiter)(nil)
)

// A Keyed is a set of shared buckets, one per key, all alike: a
// per-account or per-user limit that holds across every process sharing
// its Redis, Prefix and Name. Each key's bucket works as a Bucket's does.
//
// A key's state lives in Redis only while it matters: its tat key expires
// within a second of the bucket being full again, its pause key within a
// second of the pause's end. A key never used, or idle long enough to
// be full, costs nothing. Every key of a Keyed shares the hash tag
// "{Prefix:rate:Name}", so a Redis Cluster serves one Keyed from one node;
// spread the load with several Names.
//
// A Keyed is safe for concurrent use. Use NewKeyed; the zero value is not
// usable. It owns no goroutine and nothing to close.
type Keyed struct {
	c     redis.UniversalClient
	s     *shape
	takes *flight.Group[string, int64] // of TakeKey (tries.go)
}

// NewKeyed returns a Keyed of cfg's shared buckets on client, once it
// made sure, within ctx, that client's server can hold them, as NewBucket does;
// otherwise, or if cfg is not valid, an error that names the server's
// address, or the first invalid field, and what is wrong.
func NewKeyed(ctx context.Context, client redis.UniversalClient, cfg KeyedConfig) (*Keyed, error) {
	if client == nil {
		return nil, errors.New("redisrate: NewKeyed needs a client, got nil")
	}
	s, err := cfg.shape()
	if err != nil {
		return nil, err
	}
	if err := check(ctx, client); err != nil {
		return nil, err
	}
	k := &Keyed{c: client, s: s}
	k.takes = newTries(k)
	return k, nil
}

// Allow takes one event of key if its bucket has one now and no pause of
// key is in effect; see Bucket.Allow.
func (k *Keyed) Allow(ctx context.Context, key string) (bool, error) {
	return k.bucket(key).allow(ctx)
}

// Wait blocks until one event of key may happen; see Bucket.Wait. A
// pause of key set after Wait took its turn does not hold it (only a
// KeyLimiter's own waiters hear of its pauses).
func (k *Keyed) Wait(ctx context.Context, key string) error {
	return k.bucket(key).wait(ctx)
}

// PauseKey holds every event of key, in every process, for d; see
// Bucket.Pause.
func (k *Keyed) PauseKey(ctx context.Context, key string, d time.Duration) error {
	return k.bucket(key).pause(ctx, d)
}

// For returns key's bucket as a ratelimit.Limiter and ratelimit.Pauser,
// for a pacer Config.Limiter or a ratelimit.Transport. Its Redis keys are
// built once; reuse it for a key in use. Each call returns a new value.
func (k *Keyed) For(key string) *KeyLimiter {
	kl := &KeyLimiter{}
	k.init(&kl.b, key, true)
	return kl
}

// bucket returns key's bucket for one call.
func (k *Keyed) bucket(key string) *bucket {
	b := &bucket{}
	k.init(b, key, false)
	return b
}

func (k *Keyed) init(b *bucket, key string, ahead bool) {
	tat, pause := k.s.keyedKeys(key)
	r := newRemote(k.c, k.s, tat, pause, ahead)
	b.srv = r
	if ahead { // a KeyLimiter's calls share flights, as a Bucket's do
		b.srv = newFlights(r, k.s.clk.Now)
	}
	b.s = k.s
	b.key = key
	b.keyed = true
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

// Err returns the error of the last PauseFor, nil if it reached Redis or
// if there was none.
func (l *KeyLimiter) Err() error { return l.b.err() }
