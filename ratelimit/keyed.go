package ratelimit

import (
	"context"
	"hash/maphash"
	"math"
	"sync"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
)

// numShards splits Keyed's map so that keys on different shards never
// contend for one lock.
const numShards = 64

// Keyed is a set of token buckets, one per key, all with the same rate and
// burst: a per-account or per-user limit.
//
// A key's bucket is made on first use, full, and dropped once it has been
// full again (and unpaused, with no one waiting on it) for IdleTTL, so
// memory follows the keys in use, not every key ever seen. Dropping is
// lazy: each shard of the key space is swept when a call touches it after
// its sweep time, and a shard whose map has shrunk to a quarter of its peak
// is reallocated, since Go maps never give memory back. A sweep visits every
// key of its shard (1/64 of the keys) and runs at most once per IdleTTL/2
// per shard; Len sweeps every shard that is due.
//
// Each bucket is one small struct (the time it is full again, as in GCRA,
// the time of its last event, and its pause), not a rate.Limiter. Token
// times are whole nanoseconds, so the interval between tokens is 1/Rate
// rounded to the nanosecond.
//
// Times passed to AllowAt need not be in order; Keyed then answers as
// x/time/rate's Limiter does. An event at t before the key's last event
// (the latest taken, or its pause) sees the tokens that were left at the
// last event: time running backwards neither credits nor takes away tokens.
// If it is allowed, t becomes the last event, and the tokens earned
// afterwards count from t. So with times out of order a key may pass more
// than Burst + Rate·d events within a span d, as x/time/rate does.
//
// A key's pause (PauseKey) holds the key's current and future waiters until
// it ends and empties the key's bucket, like Bucket.PauseUntil; a waiter that
// was already sleeping notices the pause when it wakes and then waits for
// its end. Waiters of one key are served in the order they reserved.
//
// A Keyed is safe for concurrent use. Use NewKeyed; the zero value is not
// usable. It owns no goroutines, so it needs no Close.
type Keyed[K comparable] struct {
	clk      timing.Clock
	interval int64 // nanoseconds per token
	span     int64 // burst * interval: how far ahead of now "full" may run before a wait
	burst    int
	ttl      int64
	seed     maphash.Seed
	shards   [numShards]shard[K]
}

type shard[K comparable] struct {
	mu      sync.Mutex
	m       map[K]*keyState
	peak    int      // the most entries m held since it was made
	sweepAt int64    // Unix nanoseconds of the next sweep; MaxInt64 when m is empty
	_       [32]byte // one shard per 64-byte cache line
}

// keyState is one key's bucket.
type keyState struct {
	full    int64  // Unix nanoseconds at which the bucket is full again, seen from last
	last    int64  // Unix nanoseconds of the last event taken, or of the pause
	pause   int64  // Unix nanoseconds until which the key is paused
	gen     uint32 // bumped by every pause, which voids the tokens of sleepers
	waiters int32  // sleeping Waits; the bucket is not dropped while there are any
}

// NewKeyed returns a Keyed limiter made from cfg, or an error naming the
// first invalid field.
func NewKeyed[K comparable](cfg KeyedConfig) (*Keyed[K], error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	k := &Keyed[K]{
		clk:      timing.From(cfg.Clock),
		interval: max(1, int64(math.Round(1e9/cfg.Rate))),
		burst:    cfg.Burst,
		ttl:      int64(cfg.IdleTTL),
		seed:     maphash.MakeSeed(),
	}
	k.span = int64(cfg.Burst) * k.interval
	for i := range k.shards {
		k.shards[i].sweepAt = math.MaxInt64
	}
	return k, nil
}

// lock returns key's shard, locked, after doing its sweep if one is due at now.
func (k *Keyed[K]) lock(key K, now int64) *shard[K] {
	s := &k.shards[maphash.Comparable(k.seed, key)%numShards]
	s.mu.Lock()
	if now >= s.sweepAt {
		k.sweep(s, now)
	}
	return s
}

// state returns key's bucket, making a full one if there is none.
func (k *Keyed[K]) state(s *shard[K], key K, now int64) *keyState {
	e := s.m[key]
	if e == nil {
		if s.m == nil {
			s.m = make(map[K]*keyState)
		}
		e = &keyState{full: now, last: now}
		s.m[key] = e
		s.peak = max(s.peak, len(s.m))
		if s.sweepAt == math.MaxInt64 {
			s.sweepAt = addNanos(now, k.ttl)
		}
	}
	return e
}

// sweep drops the idle buckets of s and shrinks its map.
func (k *Keyed[K]) sweep(s *shard[K], now int64) {
	for key, e := range s.m {
		if e.waiters == 0 && addNanos(max(e.full, e.pause), k.ttl) <= now {
			delete(s.m, key)
		}
	}
	switch n := len(s.m); {
	case n == 0:
		s.m, s.peak, s.sweepAt = nil, 0, math.MaxInt64
		return
	case n*4 <= s.peak && s.peak > 64:
		m := make(map[K]*keyState, n)
		for key, e := range s.m {
			m[key] = e
		}
		s.m, s.peak = m, n
	}
	s.sweepAt = addNanos(now, max(k.ttl/2, 1))
}

// Len returns the number of keys that have a bucket, after dropping the
// idle ones.
func (k *Keyed[K]) Len() int {
	now := k.clk.Now().UnixNano()
	n := 0
	for i := range k.shards {
		s := &k.shards[i]
		s.mu.Lock()
		if now >= s.sweepAt {
			k.sweep(s, now)
		}
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// Allow is shorthand for AllowAt(key, now, 1) with now from the clock.
func (k *Keyed[K]) Allow(key K) bool { return k.AllowAt(key, k.clk.Now(), 1) }

// AllowAt reports whether n events of key may happen at t, and if so takes
// their tokens. It is false while the key is paused. t may be earlier than
// the key's last event; AllowAt then answers as x/time/rate's AllowN (see
// Keyed).
func (k *Keyed[K]) AllowAt(key K, t time.Time, n int) bool {
	now := t.UnixNano()
	s := k.lock(key, now)
	defer s.mu.Unlock()
	e := k.state(s, key, now)
	if now < e.pause || n > k.burst {
		return false
	}
	nf := max(e.fullAt(now), now) + int64(n)*k.interval
	if nf-now > k.span {
		return false
	}
	e.full, e.last = nf, now
	return true
}

// fullAt returns when the bucket is full again, seen from an event at now.
// Before the last event, that is as far after now as it was after the last
// event: x/time/rate's Limiter treats time running backwards as no time
// passing.
func (e *keyState) fullAt(now int64) int64 {
	if now < e.last {
		return e.full - (e.last - now)
	}
	return e.full
}

// keyTicket is one waiter's place in a key's bucket: due at at; held when
// it holds a token (full and gen tell whether it may be given back).
type keyTicket struct {
	at   int64
	held bool
	full int64
	gen  uint32
}

// reserve takes n tokens of key at now, or, while the key is paused, takes
// nothing and is due at the pause's end.
func (k *Keyed[K]) reserve(key K, now int64, n int) keyTicket {
	s := k.lock(key, now)
	defer s.mu.Unlock()
	e := k.state(s, key, now)
	if now < e.pause {
		return keyTicket{at: e.pause}
	}
	e.full, e.last = max(e.fullAt(now), now)+int64(n)*k.interval, now
	return keyTicket{at: max(now, e.full-k.span), held: true, full: e.full, gen: e.gen}
}

// still reports whether tk still holds its token at now: no pause came since
// it was taken. If not, the caller must reserve again.
func (k *Keyed[K]) still(key K, now int64, tk keyTicket) (paused int64, ok bool) {
	s := k.lock(key, now)
	defer s.mu.Unlock()
	e := s.m[key]
	if e == nil {
		return 0, tk.held // dropped while idle: no pause can have come
	}
	if now < e.pause {
		return e.pause, false
	}
	return 0, tk.held && e.gen == tk.gen
}

// cancel gives tk's tokens back if no one reserved after it.
func (k *Keyed[K]) cancel(key K, now int64, n int, tk keyTicket) {
	if !tk.held {
		return
	}
	s := k.lock(key, now)
	defer s.mu.Unlock()
	if e := s.m[key]; e != nil && e.gen == tk.gen && e.full == tk.full {
		e.full -= int64(n) * k.interval
	}
}

// Wait blocks until one event of key may happen. It fails at once if the
// event could not happen before ctx's deadline, and returns ctx.Err() if
// ctx ends first; in both cases the reserved token is given back.
func (k *Keyed[K]) Wait(ctx context.Context, key K) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	now := k.clk.Now().UnixNano()
	tk := k.reserve(key, now, 1)
	if tk.held && tk.at <= now {
		return nil
	}
	_, err := k.await(ctx, key, now, tk)
	return err
}

// sleeping counts a sleeping Wait of key in or out. A key with a sleeper
// has a bucket: its reservation or pause keeps it from being dropped
// between reserve and the count going up, and the count does after that.
func (k *Keyed[K]) sleeping(key K, now int64, delta int32) {
	s := k.lock(key, now)
	defer s.mu.Unlock()
	if e := s.m[key]; e != nil {
		e.waiters += delta
	}
}

// await sleeps until tk is due, reserving again when a pause voided it.
func (k *Keyed[K]) await(ctx context.Context, key K, now int64, tk keyTicket) (keyTicket, error) {
	k.sleeping(key, now, +1)
	defer func() { k.sleeping(key, k.clk.Now().UnixNano(), -1) }()
	deadline, hasDeadline := ctx.Deadline()
	var timer timing.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if tk.at <= now {
			paused, ok := k.still(key, now, tk)
			switch {
			case ok:
				return tk, nil
			case paused != 0:
				tk = keyTicket{at: paused}
			default:
				tk = k.reserve(key, now, 1)
				if tk.held && tk.at <= now {
					return tk, nil
				}
			}
		}
		if hasDeadline && tk.at > unixNanos(deadline) {
			k.cancel(key, now, 1, tk)
			return tk, ErrWouldExceedDeadline
		}
		d := time.Duration(tk.at - now)
		if timer == nil {
			timer = k.clk.NewTimer(d)
		} else {
			timer.Reset(d)
		}
		select {
		case <-timer.C():
		case <-ctx.Done():
			k.cancel(key, k.clk.Now().UnixNano(), 1, tk)
			return tk, ctx.Err()
		}
		now = k.clk.Now().UnixNano()
	}
}

// PauseKey holds key's current and future events for d from now, and
// empties its bucket. A later pause extends an earlier one; an earlier one
// never shortens it; d <= 0 does nothing.
func (k *Keyed[K]) PauseKey(key K, d time.Duration) {
	if d <= 0 {
		return
	}
	now := k.clk.Now().UnixNano()
	s := k.lock(key, now)
	defer s.mu.Unlock()
	e := k.state(s, key, now)
	end := addNanos(now, int64(d))
	if end <= e.pause {
		return
	}
	e.pause = end
	e.full, e.last = now+k.span, now
	e.gen++
}

// For returns key's view of k: a Limiter and Pauser for that key alone, to
// hand to a Transport or to All (for example All(perAccount.For(id), global)).
func (k *Keyed[K]) For(key K) KeyLimiter[K] { return KeyLimiter[K]{k: k, key: key} }

// KeyLimiter is one key of a Keyed limiter, as a Limiter and Pauser. Make it
// with Keyed.For.
type KeyLimiter[K comparable] struct {
	k   *Keyed[K]
	key K
}

// Wait waits for one event of the key; see Keyed.Wait.
func (l KeyLimiter[K]) Wait(ctx context.Context) error { return l.k.Wait(ctx, l.key) }

// PauseFor pauses the key; see Keyed.PauseKey.
func (l KeyLimiter[K]) PauseFor(d time.Duration) { l.k.PauseKey(l.key, d) }

func (l KeyLimiter[K]) reserveOne() (ticket, error) {
	now := l.k.clk.Now().UnixNano()
	kt := l.k.reserve(l.key, now, 1)
	return ticket{delay: time.Duration(kt.at - now), held: kt.held, key: kt}, nil
}

func (l KeyLimiter[K]) awaitOne(ctx context.Context, t ticket) (ticket, error) {
	kt, err := l.k.await(ctx, l.key, l.k.clk.Now().UnixNano(), t.key)
	return ticket{held: err == nil, key: kt}, err
}

func (l KeyLimiter[K]) cancelOne(t ticket) {
	l.k.cancel(l.key, l.k.clk.Now().UnixNano(), 1, t.key)
}
