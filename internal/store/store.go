// Package store is the seam between pacer.Runner's workers and the place
// its values live. The workers talk only to the Store interface, which has
// two implementations: Memory keeps typed values in the process on top of
// fifo.Groups (the path of a Runner without Config.Store), and the Runner's
// adapter over a store.Store engine encodes them for an engine that several
// processes may share.
//
// Every method that may reach an engine takes a ctx and returns an error;
// Memory's never fail.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/pacerkit/pacer/fifo"
	"github.com/pacerkit/pacer/internal/timing"
	engine "github.com/pacerkit/pacer/store"
)

// ErrStopped is returned by Put after Stop, and by Get once the store is
// stopped and has nothing more to hand out.
var ErrStopped = errors.New("store: stopped")

// A Lease is the exclusive right to handle the first Values of a key. It is
// ended by exactly one of Store.Ack, Drop, Retry, Defer or Hold, unless the
// lease was lost (see Store.Keep).
type Lease[K comparable, V any] struct {
	Key     K
	Values  []V
	Attempt int // 1 for the first handling of these values

	// Remote is the engine's lease, for a Store over a store.Store; nil on
	// Memory.
	Remote *Remote

	mem fifo.Lease[K, V] // Memory's own lease
}

// Remote is what a Store over a store.Store keeps of an engine's lease.
type Remote struct {
	Lease engine.Lease
	// Claimed is when the Claim that got the lease was sent, on the
	// Runner's clock: the lease lasts its TTL from then at least.
	Claimed time.Time
	// Deadline is when the Runner stops working under the lease, by its
	// own clock: Life after Claimed, moved by each renewal that succeeded.
	Deadline *Deadline
	// Keeper, once the Runner keeps the lease (Store.Keep), is what keeps
	// it; nil before.
	Keeper Keeper
	// Err says why some of the lease's values, or its key, could not be
	// decoded; Values holds those that could.
	Err error
}

// A Keeper keeps an engine's lease alive while the Runner works on it, on
// a goroutine of its own, which also makes the call that ends the lease.
type Keeper interface {
	// End runs call, the call that ends the lease, on the keeper's
	// goroutine, and reports whether it will: false if the keeper is gone,
	// having lost the lease.
	End(call func()) bool
}

// Unreadable returns why l's values could not all be decoded, or nil.
func (l Lease[K, V]) Unreadable() error {
	if l.Remote == nil {
		return nil
	}
	return l.Remote.Err
}

// Lapsed reports whether l's Deadline passed on clk: the lease may be
// another holder's, so l must be neither handled nor ended. A lease of
// Memory never lapses, and costs no reading of the clock.
func (l Lease[K, V]) Lapsed(clk timing.Clock) bool {
	return l.Remote != nil && l.Remote.Deadline.Lapsed(clk.Now())
}

// Gauges are a store's counts, read at one instant.
type Gauges struct {
	// Values counts every value stored, debouncing and leased ones
	// included; -1 when the store does not know (Memory: the Runner counts
	// its values itself, debouncing ones are not in the store).
	Values   int
	Queued   int // values not out on a lease
	InFlight int // leases out
	Pending  int // keys whose burst debounces in the store
	Held     int // held keys
	Retrying int // keys waiting for a Retry delay
	Blocked  int // values behind the retried batches of those keys
	Dead     int // dead letters kept
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
	Put(ctx context.Context, key K, vs ...V) error
	// Get leases the head values of the first ready key, blocking until
	// one is ready, ctx ends (ctx.Err()), or the store is stopped and has
	// nothing more to hand out (ErrStopped).
	Get(ctx context.Context) (Lease[K, V], error)
	// Keep keeps l alive while the Runner works on it, until l is ended.
	// It returns the ctx to work under, which ends early if the lease is
	// lost, and a function to call once the work is over, before l is
	// ended: it reports the loss (nil if l is still held), in which case l
	// must not be ended; otherwise l must be ended.
	Keep(ctx context.Context, l Lease[K, V]) (context.Context, func() (lost error))
	// Ack ends l and removes its values. more reports whether the key
	// still has values, in which case it became ready again, at the tail.
	Ack(ctx context.Context, l Lease[K, V]) (more bool, err error)
	// Drop ends l and gives its values up, as Ack does; a store that keeps
	// dead letters keeps them with why.
	Drop(ctx context.Context, l Lease[K, V], why error) (more bool, err error)
	// Retry ends l and keeps its values at the head of the key, which is
	// not ready before after has passed; its next lease has exactly the
	// same values and Attempt one higher. Values put meanwhile wait behind
	// them and form the lease after, at Attempt 1.
	Retry(ctx context.Context, l Lease[K, V], after time.Duration) error
	// Defer is Retry without counting an attempt: the handler did not
	// fail, it did not run or was cut short (window closed, shutdown).
	Defer(ctx context.Context, l Lease[K, V], after time.Duration) error
	// Hold ends l, keeps its values at the head and takes the key out of
	// rotation until Release.
	Hold(ctx context.Context, l Lease[K, V]) error
	// Release puts a held key back in the ready order, at the tail, with
	// its Attempt started over. It reports whether key was held.
	Release(ctx context.Context, key K) (bool, error)
	// Gauges returns the store's counts.
	Gauges(ctx context.Context) (Gauges, error)
	// Active returns the number of values a draining Runner must still
	// handle before it is done: for Memory every value except those of
	// held keys; for a shared engine none, since the engine keeps them for
	// the next Runner.
	Active() int
	// Behind returns the number of values of key behind its head batch,
	// whether that batch is leased, waiting for a retry, or held; 0 when
	// the store cannot tell cheaply.
	Behind(key K) int
	// Stop refuses further Puts and winds Get down: Memory hands out what
	// is or becomes ready, waiting for pending retries, then returns
	// ErrStopped once nothing is ready or waiting for a retry (held keys
	// stay held); a shared engine stops claiming at once. Stop is
	// idempotent.
	Stop()
	// Close stops the store and hands every value it still holds in the
	// process (ready, waiting for a retry, or held) to left, a batch at a
	// time and in order within a key; a shared engine keeps its values
	// and hands nothing. No lease may be out. Close is idempotent.
	Close(left func(key K, vs []V))
}
