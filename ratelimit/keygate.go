package ratelimit

import (
	"context"
	"time"
)

// A KeyGate is a limit per key that never makes its caller wait: asked
// for a key's event, it takes the key's token if one is there now, or
// else takes nothing and says how long until one is. A caller that has
// other work (a pacer Runner with other keys ready, whose
// Config.KeyLimit is a KeyGate) puts the key aside for that long instead
// of sleeping on it. Keyed (in the process), redisrate.Keyed (shared by
// every process on one Redis) and pgrate.Keyed (on one PostgreSQL)
// implement it.
//
// Implementations are safe for concurrent use. Each method checks ctx
// first and returns ctx.Err() if it is done, with nothing changed.
type KeyGate[K comparable] interface {
	// TakeKey takes one event of key and returns 0 if it may happen now:
	// no pause of key is in effect and its bucket holds a token.
	// Otherwise it takes nothing and returns how long from now until it
	// could happen, if no one else took key's tokens meanwhile: after the
	// key's pause, once its bucket holds a token; always > 0. Taking the
	// event later then takes another call, which may find the token gone
	// to someone else and return a new wait.
	TakeKey(ctx context.Context, key K) (wait time.Duration, err error)
	// PeekKey returns what TakeKey would, and takes nothing: 0 if an
	// event of key may happen now, else the wait.
	PeekKey(ctx context.Context, key K) (wait time.Duration, err error)
	// PauseKeyFor holds every event of key for d from now, as a server's
	// Retry-After about that key asks, and empties its bucket; it is
	// PauseKey with a ctx and an error. A later pause extends an earlier
	// one, an earlier one never shortens it, and d <= 0 does nothing.
	PauseKeyFor(ctx context.Context, key K, d time.Duration) error
}

var _ KeyGate[string] = (*Keyed[string])(nil)

// TakeKey takes one event of key if it may happen now, and otherwise
// says how long until it may; see KeyGate. It is AllowAt(key, now, 1)
// that also tells the wait when it says no. O(1).
func (k *Keyed[K]) TakeKey(ctx context.Context, key K) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	now := k.clk.Now().UnixNano()
	s := k.lock(key, now)
	defer s.mu.Unlock()
	e := k.state(s, key, now)
	if at := k.readyAt(e, now); at > now {
		return time.Duration(at - now), nil
	}
	e.full, e.last = max(e.fullAt(now), now)+k.interval, now
	return 0, nil
}

// PeekKey returns what TakeKey would, and takes nothing; see KeyGate.
// It makes no bucket for a key that has none. O(1).
func (k *Keyed[K]) PeekKey(ctx context.Context, key K) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	now := k.clk.Now().UnixNano()
	s := k.lock(key, now)
	defer s.mu.Unlock()
	e := s.m[key]
	if e == nil { // none, or dropped while full: ready now
		return 0, nil
	}
	return time.Duration(k.readyAt(e, now) - now), nil
}

// PauseKeyFor is PauseKey for KeyGate: it never fails once ctx is live.
func (k *Keyed[K]) PauseKeyFor(ctx context.Context, key K, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	k.PauseKey(key, d)
	return nil
}

// readyAt returns when one event of e's key conforms, seen from now: at
// the end of its pause, once its bucket holds a token (GCRA: full, less
// the span of a full bucket, plus one interval), and not before now. It
// is the instant AllowAt(key, t, 1) first holds, with no one else taking.
func (k *Keyed[K]) readyAt(e *keyState, now int64) int64 {
	return max(now, e.pause, e.fullAt(now)+k.interval-k.span)
}
