// Package engine is the seam between a pacer Runner and the engine that
// keeps its values: package local keeps them in the process, package shared
// in a store.Store that processes share. The Runner talks to the Engine
// interface only. It mirrors the store contract (package store) for typed
// keys and values: Put and PutTx, Get (a claim), Keep, Finish with an
// Outcome, Release, Gauges, Key and the dead letters, plus Drain and Close
// for the Runner's lifecycle.
//
// An engine that lacks a capability says so with an error (ErrNoTx,
// ErrNoDeadLetters, ErrNoInspector, or 0 from Behind), never through its
// type: the Runner does not know which engine it talks to.
package engine

import (
	"context"
	"time"

	"github.com/pacerkit/pacer/store"
)

// An Engine holds a Runner's values, partitioned by key and in order inside
// a key, and leases them out with these guarantees:
//
//   - A key has at most one lease at a time, or up to the Runner's
//     Config.PerKey, each of its own batch, leased in Put order.
//   - A key's values are leased in Put order and never skipped except by a
//     Drop; a retried, deferred or held batch stays at the head of its key.
//   - Keys are leased first come, first served by the time they became
//     ready: their burst closed, a lease ended with values behind it, a
//     retry delay passed, or the key was released.
//
// Methods that may reach a server take a ctx and return an error; those of
// the engine in the process never fail. Implementations are safe for
// concurrent use.
type Engine[K comparable, V any] interface {
	// Put appends v to key, behind its earlier values: into the key's open
	// burst when the Runner debounces, ready at once otherwise. It returns
	// ErrClosed after Drain, and an error wrapping store.ErrFull when the
	// engine's bound (Config.MaxValues) refused v. On any error, v was not
	// added.
	Put(ctx context.Context, key K, v V) error
	// PutTx is Put inside tx, a transaction of the caller's on the
	// engine's database: v is added if and only if tx commits. It returns
	// ErrNoTx, before anything else, when the engine cannot add inside a
	// transaction.
	PutTx(ctx context.Context, tx any, key K, v V) error
	// PutAfter is Put for a value that is not leased before d (> 0) passed
	// on the engine's clock: the key's values put after it wait behind it
	// (see store.AddParams.Delay). It returns an error, and adds nothing,
	// when the Runner debounces.
	PutAfter(ctx context.Context, key K, v V, d time.Duration) error
	// PutTxAfter is PutTx with PutAfter's delay.
	PutTxAfter(ctx context.Context, tx any, key K, v V, d time.Duration) error
	// Get leases the head values of the first ready key, blocking until
	// one is ready, ctx ends (ctx.Err()), or the engine is drained and has
	// nothing more to hand out (ErrClosed).
	Get(ctx context.Context) (Lease[K, V], error)
	// Keep keeps l alive while the Runner works on it, until l is
	// finished. It returns the ctx to work under, which ends early if the
	// lease is lost, and what to call once the work is over (Kept.Over),
	// before l is finished: it reports the loss (nil if l is still held),
	// in which case l must not be finished; otherwise l must be finished.
	Keep(ctx context.Context, l Lease[K, V]) (context.Context, Kept)
	// Finish ends l as o says, with the meaning of store.Outcome: Ack and
	// Drop remove its values (a Drop is kept as a dead letter where the
	// engine keeps them), Retry and Defer keep them at the head of the key
	// until o.After passed (Retry counts an attempt, Defer does not), Hold
	// keeps them and takes the key out of the ready order until Release.
	// more reports whether the key still has values, in which case it
	// became ready again at the tail; it is true after Retry, Defer and
	// Hold. Finish runs even when ctx ended: a stopping Runner defers its
	// batches. An engine that acks in the background (see package shared)
	// returns false and nil for such an Ack at once, and reports its end
	// to the callback of its config.
	Finish(ctx context.Context, l Lease[K, V], o store.Outcome) (more bool, err error)
	// Release puts a held key back in the ready order, at the tail, with
	// its Attempt started over. It reports whether key was held.
	Release(ctx context.Context, key K) (bool, error)
	// Behind returns the number of values of key behind its head batch,
	// whether that batch is leased, waiting for a retry, or held, read in
	// O(1); 0 when the engine cannot tell (the store contract counts them
	// per queue only).
	Behind(key K) int
	// Gauges returns the engine's counts, read at one instant.
	Gauges(ctx context.Context) (Gauges, error)
	// Key returns what key is doing, for an operator: the state of its
	// head batch, its values, and whether it or the queue is paused. It
	// changes nothing. It returns ErrNoInspector when the engine cannot
	// look at one key.
	Key(ctx context.Context, key K) (KeyState, error)
	// DeadLetters returns up to limit of the batches given up, oldest
	// first, after the one with ID after (0: from the oldest). It returns
	// ErrNoDeadLetters when the engine keeps none, as do Redrive and
	// Purge.
	DeadLetters(ctx context.Context, after uint64, limit int) ([]DeadLetter[K, V], error)
	// Redrive puts the values of dead letter id back at the tail of its
	// key, ready at once, and removes the dead letter. It reports whether
	// the dead letter existed.
	Redrive(ctx context.Context, id uint64) (bool, error)
	// Purge removes the dead letters dropped before t, on the engine's
	// clock, and returns how many it removed.
	Purge(ctx context.Context, before time.Time) (int, error)
	// Drain stops intake and winds Get down: Put refuses values from now
	// on. The engine in the process closes the open bursts at once and
	// hands out what is or becomes ready, retries included, until nothing
	// is left but held keys; an engine that processes share claims
	// nothing more and keeps its values for the next Runner. Drain is
	// idempotent.
	Drain()
	// Close drains the engine and hands every value it still holds in the
	// process to the callback of its config; it waits for the engine's
	// goroutines and calls. No lease may be out. Close is idempotent.
	Close()
}

// Kept is what Engine.Keep returns besides the ctx to work under. An
// interface rather than a func, so that the keeper of a lease is its own
// Kept, with no closure to allocate.
type Kept interface {
	// Over ends the keeping of a lease once the work is over, and reports
	// its loss: nil if the lease is still held.
	Over() (lost error)
}

// InProcess is the Kept of a lease of an engine in the process, which
// lasts until it is finished.
var InProcess Kept = inProcess{}

type inProcess struct{}

func (inProcess) Over() error { return nil }
