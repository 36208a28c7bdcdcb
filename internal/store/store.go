// Package store is the seam between pacer.Runner and the place its queued
// values live. The Runner talks only to the Store interface; Memory keeps
// everything in process on top of fifo.Groups, and a shared backend (Redis,
// PostgreSQL) can implement the same interface without any change to the
// Runner's API.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/pacerkit/pacer/fifo"
)

// ErrStopped is returned by Put after Stop, and by Get once the store is
// stopped and nothing is ready.
var ErrStopped = errors.New("store: stopped")

// A Lease is the exclusive right to handle the first Values of a key. It is
// ended by exactly one of Store.Ack, Drop, Retry, Defer or Hold.
type Lease[K comparable, V any] struct {
	Key     K
	Values  []V
	Attempt int // 1 for the first handling of these values

	// Token identifies the lease to a backend that keeps its state
	// elsewhere (a fencing token); Memory does not use it.
	Token uint64

	mem fifo.Lease[K, V] // Memory's own lease
}

// Store holds the values of a Runner, partitioned by key and in order
// inside a key, and leases them out with these guarantees:
//
//   - A key has at most one lease at a time.
//   - A key's values are leased in Put order and never skipped except by
//     Drop; a retried or held batch stays at the head of its key.
//   - Keys are leased first-come-first-served by the time they became
//     ready: when first put, when a lease ended with values behind it, when
//     a retry delay passed, or when released.
//
// Implementations are safe for concurrent use.
type Store[K comparable, V any] interface {
	// Put appends vs to key, behind its earlier values. It returns
	// ErrStopped after Stop.
	Put(key K, vs ...V) error
	// Get leases the head values of the first ready key, blocking until
	// one is ready, ctx ends (ctx.Err()), or the store is stopped and
	// nothing is ready (ErrStopped).
	Get(ctx context.Context) (Lease[K, V], error)
	// Ack ends l and removes its values. more reports whether the key
	// still has values, in which case it became ready again, at the tail.
	Ack(l Lease[K, V]) (more bool)
	// Drop ends l and gives its values up, as Ack does.
	Drop(l Lease[K, V]) (more bool)
	// Retry ends l and keeps its values at the head of the key, which is
	// not ready before after has passed; its next lease has exactly the
	// same values and Attempt one higher. Values put meanwhile wait behind
	// them and form the lease after, at Attempt 1.
	Retry(l Lease[K, V], after time.Duration)
	// Defer is Retry without counting an attempt: the handler did not
	// fail, it did not run or was cut short (window closed, shutdown).
	Defer(l Lease[K, V], after time.Duration)
	// Hold ends l, keeps its values at the head and takes the key out of
	// rotation until Release.
	Hold(l Lease[K, V])
	// Release puts a held key back in the ready order, at the tail, with
	// its Attempt started over. It reports whether key was held.
	Release(key K) bool
	// Len returns the number of values not out on a lease.
	Len() int
	// Leased returns the number of leases out.
	Leased() int
	// Held returns the number of held keys.
	Held() int
	// Retrying returns the number of keys waiting for a Retry delay (not
	// a Defer) and of the values put behind their retried batches, which
	// wait for them: in strict mode, the keys blocked by a failing value
	// and the values they hold up. Both are read at one instant.
	Retrying() (keys, behind int)
	// Active returns the number of values that still have work ahead of
	// them: every value except those of held keys.
	Active() int
	// Behind returns the number of values of key behind its head batch,
	// whether that batch is leased, waiting for a retry, or held.
	Behind(key K) int
	// Stop refuses further Puts; Get hands out what is or becomes ready,
	// waiting for pending retries, then returns ErrStopped once nothing is
	// ready or waiting for a retry. Held keys stay held. Stop is
	// idempotent.
	Stop()
	// Close stops the store and hands every value it still holds (ready,
	// waiting for a retry, or held) to left, a batch at a time and in order
	// within a key, then frees its resources. No lease may be out. Close is idempotent.
	Close(left func(key K, vs []V))
}
