// Package store is the contract between a pacer Runner and the engine that
// keeps its state: the values waiting per key, the debounce of each key's
// burst, the lease that makes a key exclusive, retries, held keys and dead
// letters. Memory keeps that state in the process; redis/redisstore and
// pg/pgstore keep it in a server that several processes share, so that
// every Runner guarantee holds across all of them and a crash loses nothing
// that Add accepted. The suite in store/storetest holds every engine to the
// same contract.
//
// The contract speaks bytes and strings, not a Runner's K and V: the Runner
// encodes keys and values (see pacer.Codec), so one engine serves Runners
// of any types. A key is any string, the empty one, any bytes and any
// length (1 MiB at least, on every engine) included.
// Several Runners share a store by using different queue names; an engine
// may refuse some names (redisstore refuses braces, its hash-tag
// delimiters) with an error that says so.
//
// # Guarantees
//
// An engine must keep all of these, across every process that uses it:
//
//   - Order: a key's values are leased in Add order and never skipped,
//     except by a Drop.
//   - Delay: a value added with AddParams.Delay is not leased before its
//     time, and the values added after it wait behind it (see below).
//   - Exclusivity: a key has at most one lease at a time, or, with
//     ClaimParams.PerKey on an engine that implements PerKeyClaimer, at
//     most PerKey leases, each of its own batch (see PerKeyClaimer). A lease
//     lapses when its TTL passes without Extend; its batch is then leased
//     again, with the same values, the next Attempt and a larger Fence.
//   - Fencing: every lease of a key carries a Fence larger than the one
//     before, even when the key emptied in between and its state was
//     removed (draw fences from a counter of the queue, not of the key).
//     Extend and Finish refuse a lease that lapsed, ended, or whose fence
//     moved, with ErrLeaseLost, and change nothing.
//   - Fairness: keys are leased in the order they became ready: their burst
//     came due, a lease ended with values behind it, a retry delay passed, or
//     the key was released. A key that just ran goes behind the keys already
//     waiting.
//     With tenants (AddParams.Tenant, on an engine that implements
//     FairTenants), keys are leased in turns across tenants, each tenant
//     getting turns in proportion to its weight, and in the order above
//     within a tenant: a Claim takes the tenant with the smallest virtual
//     time among those with a ready key (ties go to the smaller tenant
//     name), leases that tenant's oldest-ready key and advances the
//     tenant's virtual time by 1/weight. The queue's virtual clock is the
//     virtual time of the last tenant served; a tenant that had no ready
//     key and gets one starts from the larger of its own virtual time and
//     that clock, so that idleness earns no credit and a busy tenant
//     cannot starve one that comes back. Keys without a tenant form one
//     tenant of weight 1 among the others; a queue where no Add ever named
//     a tenant is leased in the order above alone, on the same path and at
//     the same cost as without tenants.
//   - Debounce: values added with a Wait join the key's open burst; the burst
//     is ready once no value came for Wait, and no later than MaxWait after
//     its first value. Values that arrive while the key is leased wait behind
//     the lease and run after it.
//   - Retry: a retried or deferred batch comes back with exactly the same
//     values; values that arrived meanwhile form the next batch, at Attempt 1.
//   - Bound: an Add with AddParams.MaxValues never takes its queue past
//     that many stored values, counting those of every process, and
//     stores all of its values or none.
//   - Durability (shared engines): once Add returned nil, the values survive
//     the crash of any process.
//
// # Delayed values
//
// A value added with AddParams.Delay is due Delay after the Add, on the
// engine's clock; every other value is due when added. A key's values keep
// their Add order whatever their times, so a delayed value holds back the
// values added after it: a key whose head batch is not fixed yet is ready
// when its first value is due, and a lease takes the key's ready values
// from its head up to, not including, the first that is not due yet (a
// value due later than one behind it makes that one wait too). A key whose
// first value waits for its time is Scheduled (see KeyState) until then,
// and is counted in none of Stats' Ready, Leased, Retrying and Held; its
// values count in Values, and towards AddParams.MaxValues, from the Add.
// Claim's next, and so Wait, account for the time a delayed value comes
// due. A retried, deferred, held or lapsed batch keeps its values, whose
// times have passed. Delay does not compose with a burst: an Add with
// both Wait and Delay is refused (see AddParams.Delay).
//
// Time is the engine's own: the server's clock for a shared engine, so that
// processes whose clocks disagree still agree on deadlines. Durations in
// the contract are relative to that clock, and saturate: a delay of
// math.MaxInt64 means never.
//
// Every method takes a ctx and returns an error: a call that reaches a
// server can fail, and the caller decides what to do about it. A call whose
// ctx is already done returns ctx.Err() and changes nothing. An engine is
// safe for concurrent use.
//
// # JSON
//
// The types an operator reads (Stats, QueueInfo, KeyPage, KeyInfo,
// StoredValue, DeadLetter) marshal to JSON as pacer's own do: names in
// snake_case (held_values, max_wait), a KeyState by name ("held"), times in
// RFC 3339 in UTC with the fraction of a second they hold, and they read
// their JSON back. A field whose zero means "none" is left out: a zero
// time, an empty error, holder or cursor, fence 0, max_wait false. Counts
// are always there, 0 included. A value is bytes, whatever the codec made
// of it, and so base64, as encoding/json writes []byte, even when the bytes
// happen to be JSON or text: the shape of the JSON never depends on the
// content, and it reads back to the same bytes. Showing a value decoded is
// left to a reader that knows its codec. A key is
// a JSON string: a key that is not UTF-8 shows with U+FFFD in place of
// its invalid bytes.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrLeaseLost is returned by Extend and Finish for a lease that lapsed,
// was already finished, or whose key was leased again since: another holder
// may have the key now, so the caller must stop working on the batch and
// must not report on it.
var ErrLeaseLost = errors.New("store: lease lost")

// ErrFull is returned by an Add with AddParams.MaxValues that would take
// its queue past that bound: none of its values were stored. A Redrive,
// which has no bound, never returns it.
var ErrFull = errors.New("store: queue full")

// ErrClosed is returned by every method of a closed engine. An engine that
// owns resources (connections, a listener) implements io.Closer; closing
// it ends blocked Waits.
var ErrClosed = errors.New("store: closed")

// Store is what a pacer Runner needs from the engine that keeps its state.
// See the package doc for the guarantees an implementation must keep.
type Store interface {
	// Add appends vals to key in queue, behind the key's earlier values, as
	// one step: all of them or, with an error, none. One exception is a
	// reply lost on the way back from a server: the values may then be
	// stored although Add returned an error, so a caller that adds again
	// after such an error may add them twice (at-least-once). With p.Wait 0 they are
	// ready at once; otherwise they join the key's open burst (see
	// AddParams). With p.MaxValues it returns ErrFull, and stores none of
	// vals, when the queue would then store more than p.MaxValues values.
	// Adding no values does nothing.
	Add(ctx context.Context, queue, key string, vals [][]byte, p AddParams) error

	// Claim leases up to p.Keys ready keys for p.TTL, oldest-ready first.
	// Each lease holds the key's first ready values, at most p.MaxBatch of
	// them (0: all); values of an open burst are not ready. It does not
	// block: when no key is ready it returns no lease. next says how long
	// until the earliest key this call did not lease is ready (a burst comes
	// due, a retry delay or a lease's TTL passes): 0 when one is ready
	// already, Never when nothing is scheduled.
	Claim(ctx context.Context, queue string, p ClaimParams) (leases []Lease, next time.Duration, err error)

	// Wait blocks until d has passed, ctx ended (ctx.Err()), or the queue
	// may have changed in a way that makes a key ready sooner: an Add, a
	// Finish, a Release or a Redrive, from any process. A change made after
	// the caller's last Claim returned, but before Wait was called, is not
	// lost either: Wait then returns at once (or when the burst it opened
	// comes due), so that a worker may Wait for the next of a Claim that
	// found nothing without a race. Wake-ups may be spurious or late by a
	// little: a worker calls Claim again after Wait returns nil.
	Wait(ctx context.Context, queue string, d time.Duration) error

	// Extend renews l for ttl from now; ttl must be positive. It returns
	// ErrLeaseLost if l lapsed, ended or was superseded.
	Extend(ctx context.Context, l Lease, ttl time.Duration) error

	// Finish ends l as o says. more reports whether the key still has
	// values (ready, or in an open burst); it is always true after a Retry,
	// Defer or Hold. It returns ErrLeaseLost, and changes nothing, if l
	// lapsed, ended or was superseded.
	Finish(ctx context.Context, l Lease, o Outcome) (more bool, err error)

	// Release puts a held key back in the ready order, at the tail, with its
	// attempts started over: its next lease takes the held values and, up to
	// MaxBatch, the ready values behind them, at Attempt 1. It reports
	// whether key was held.
	Release(ctx context.Context, queue, key string) (bool, error)

	// Stats returns the counts of queue, read at one instant.
	Stats(ctx context.Context, queue string) (Stats, error)
}

// Never is the next of a Claim when nothing is scheduled: no key is
// debouncing, leased, delayed or ready.
const Never = time.Duration(1<<63 - 1)

// AddParams says when added values become ready. Each Add with a Wait sets
// the burst's deadline anew, with its own Wait and MaxWait:
// min(now+Wait, first+MaxWait), where first is when the burst's first value
// came; the burst is closed, and its values ready, from that deadline on.
type AddParams struct {
	// Wait is the quiet period: the key's burst is ready once no value came
	// for Wait. 0 makes the values ready at once (and ends an open burst:
	// they are queued behind it, which becomes ready with them).
	Wait time.Duration
	// MaxWait bounds a burst: it is ready no later than MaxWait after its
	// first value, however often values come. 0 means no bound.
	MaxWait time.Duration
	// MaxValues, when positive, bounds the values the queue stores: the
	// Add stores its values only if the queue then stores at most
	// MaxValues values, and otherwise stores none of them and returns
	// ErrFull (all or nothing: an Add of more values than MaxValues is
	// always refused). The engine counts the queue's values as it stores
	// and removes them and checks the bound in the same atomic step as
	// the Add, across every process that shares the queue, in O(1)
	// whatever the queue holds. Every value stored in the queue counts,
	// whichever Add stored it, one without a bound or with another bound
	// included: values debouncing, ready, leased, waiting for a Retry or a
	// Defer, and held. A value stops counting once a Finish acks or drops
	// its batch; dead letters do not count, and a Redrive stores its
	// values back without a bound. 0, the default, means no bound.
	MaxValues int
	// Delay, when positive, makes the values due Delay after the Add, on
	// the engine's clock: none of them is leased before then, and the
	// key's values added after them wait behind them (see Delayed values
	// in the package doc). Like an Add with a Wait of 0, a delayed Add
	// ends the key's open burst, whose values are then ready, ahead of
	// the delayed ones. It must be 0 when Wait is set: a delayed value
	// does not join a burst, and such an Add returns an error that names
	// both fields. 0, the default, means no delay; math.MaxInt64, never.
	Delay time.Duration
	// Tenant, on an engine that implements FairTenants, is the tenant of
	// key: ready keys are leased in turns across tenants (see Fairness in
	// the package doc). A key belongs to the tenant named by the Add that
	// gave it its first value, until its last value is gone: an Add that
	// names another tenant while the key has values adds them to the
	// key's tenant, and a Redrive adds to the key's tenant if it has
	// values, else to no tenant. "" is no tenant. An engine that does not
	// implement FairTenants ignores Tenant and Weight.
	Tenant string
	// Weight, from 1 to MaxWeight, is Tenant's weight: its share of the
	// turns against the other tenants with ready keys. A positive Weight
	// is the tenant's weight from then on, for every key of the tenant,
	// and counts from the tenant's next turn (the virtual time it reached
	// stays); 0 keeps the weight the tenant has, 1 for a tenant never
	// weighed. It needs a Tenant. An engine keeps each tenant's virtual
	// time and weight for the life of the queue.
	Weight int
}

// ClaimParams says what Claim may lease.
type ClaimParams struct {
	// Keys is the most keys one Claim leases; it must be at least 1.
	Keys int
	// MaxBatch is the most values in one lease; 0 means all of the key's
	// ready values. A retried or deferred batch keeps its size whatever
	// MaxBatch says.
	MaxBatch int
	// TTL is how long a lease lasts without Extend; it must be positive.
	TTL time.Duration
	// Holder names who claims, for an operator (Inspector's
	// KeyInfo.Holder): a Runner gives its instance's name. It may be "".
	Holder string
	// PerKey is the most leases one key may have out at once, each of its
	// own batch, on an engine that implements PerKeyClaimer (see there);
	// 0 and 1 mean one, the contract's exclusivity. An engine that does
	// not implement PerKeyClaimer leases one batch of a key at a time
	// whatever PerKey says, so a caller that needs more checks the
	// interface first, as pacer.New does.
	PerKey int
	// KeyRate is a rate limit per key that the Claim keeps, on an engine
	// that implements KeyRateClaimer (see there); the zero KeyRate limits
	// nothing. An engine that does not implement KeyRateClaimer ignores
	// it, so a caller that needs it checks the interface first, as
	// pacer.New does.
	KeyRate KeyRate
}

// A Lease is the exclusive right, until it lapses, to handle the first
// Values of a key. It is ended by one Finish.
type Lease struct {
	Queue  string
	Key    string
	Values [][]byte
	// Attempt is 1 for the first lease of these values, and one more for
	// each retry or lapsed lease since; Defer does not count.
	Attempt int
	// Fence grows with every lease of the key, in every process: a holder
	// passes it along with its own writes so that the writes of a holder
	// whose lease lapsed can be refused.
	Fence uint64
	// First is when the oldest value of the batch was added, on the
	// engine's clock.
	First time.Time
}

// OutcomeKind is what a Finish does with a lease's values.
type OutcomeKind uint8

// The outcomes of a lease.
const (
	// Ack removes the values: they were handled.
	Ack OutcomeKind = iota + 1
	// Drop removes the values and keeps them as a dead letter with
	// Outcome.Err, where the engine supports it (DeadLetters).
	Drop
	// Retry keeps the values at the head of the key, not ready before
	// Outcome.After; their next lease has the next Attempt.
	Retry
	// Defer is Retry without counting an attempt: the batch did not get
	// its chance (it did not run, or a closing window or a stopping process
	// cut it short).
	Defer
	// Hold keeps the values at the head and takes the key out of the ready
	// order until Release.
	Hold
)

// An Outcome says how a lease ended.
type Outcome struct {
	Kind OutcomeKind
	// After is the delay of a Retry or Defer, saturating.
	After time.Duration
	// Err is why: of a Drop, kept with the dead letter; of a Retry or a
	// Hold, kept with the key for an operator (Inspector's KeyInfo.Err)
	// until its head batch is acked, dropped or released.
	Err string
}

// Stats are the counts of a queue, read at one instant. A key with values
// is counted in at most one of Ready, Leased, Retrying and Held, by what
// its head is doing (a held key as Held, and a key with a lease out as
// Leased, whatever its other batches do; a key waiting for a Defer delay
// or for its first value's time, or whose only values are an open burst,
// in none); Pending counts every key with an open burst,
// whatever its head does. A lease whose TTL passed counts as Ready.
type Stats struct {
	Values     int `json:"values"`      // values stored: ready, debouncing, leased, delayed or held
	Keys       int `json:"keys"`        // keys with values
	Ready      int `json:"ready"`       // keys ready to be leased now
	Pending    int `json:"pending"`     // keys whose burst is still debouncing
	Leased     int `json:"leased"`      // keys out on a lease
	Retrying   int `json:"retrying"`    // keys waiting for a Retry delay
	Behind     int `json:"behind"`      // values waiting behind those keys' retried batches
	Held       int `json:"held"`        // held keys
	HeldValues int `json:"held_values"` // values of held keys
	Dead       int `json:"dead"`        // dead letters kept
	// PausedKeys counts the keys an Operator paused, with values or
	// without. A paused key's values count in Values, and the key in Keys,
	// Pending, Leased and Held as they are, but not in Ready or Retrying:
	// it waits for ResumeKey. A paused key whose values came due while it
	// was paused may count in Ready until the next Claim sets it aside.
	PausedKeys int `json:"paused_keys"`
	// Paused reports that an Operator paused the queue (PauseQueue).
	Paused bool `json:"paused,omitempty"`
}

// FinishClaimer is implemented by engines that can end a lease and claim
// the next ready keys in one step, saving a worker that is done with a
// batch and wants the next a round trip to a server.
type FinishClaimer interface {
	// FinishAndClaim ends l as Finish(ctx, l, o) does and, if it did, then
	// claims as Claim(ctx, l.Queue, p) does right after it: a key that l
	// left with values is behind the keys already waiting. It returns
	// Finish's more and Claim's leases and next. When l lapsed, ended or was
	// superseded it returns ErrLeaseLost, changes nothing and claims
	// nothing; on any other error the caller cannot know whether l ended.
	FinishAndClaim(ctx context.Context, l Lease, o Outcome, p ClaimParams) (more bool, leases []Lease, next time.Duration, err error)
}

// DeadLetters is implemented by engines that keep dropped batches.
type DeadLetters interface {
	// DeadLetters returns up to limit dead letters of queue, oldest first,
	// starting after the one with ID after (0: from the oldest).
	DeadLetters(ctx context.Context, queue string, after uint64, limit int) ([]DeadLetter, error)
	// Redrive appends the values of the dead letter with ID id to the tail
	// of its key, ready at once, and removes the dead letter. It reports
	// whether the dead letter existed.
	Redrive(ctx context.Context, queue string, id uint64) (bool, error)
	// Purge removes the dead letters of queue dropped before t, and
	// returns how many it removed.
	Purge(ctx context.Context, queue string, before time.Time) (int, error)
}

// A DeadLetter is a batch that was given up, with why and when.
type DeadLetter struct {
	ID      uint64    `json:"id"` // grows with each dead letter of the queue
	Key     string    `json:"key"`
	Values  [][]byte  `json:"values"`
	Err     string    `json:"error,omitempty"`
	Attempt int       `json:"attempt"`
	At      time.Time `json:"at,omitzero"` // when it was dropped, on the engine's clock
}

// TxAdder is implemented by engines that can add values inside a
// transaction of the caller's on the engine's own database, so that the
// values exist if and only if that transaction commits: a service stores a
// change and the work it calls for in one commit (the outbox pattern).
type TxAdder interface {
	// AddTx is Add inside tx, a transaction that the caller began and
	// ends: the values are added when tx commits, and never if it rolls
	// back. It runs on tx alone, never on a connection of its own, so that
	// it commits with the caller's statements, in their one commit. tx's
	// type is the engine's own (each engine documents the one it takes);
	// for any other type, nil included, AddTx returns an error that names
	// the type it needs and the type it got, and changes nothing.
	AddTx(ctx context.Context, tx any, queue, key string, vals [][]byte, p AddParams) error
}

// ValidateDelay returns an error naming the fields of p when it asks for a
// Delay that no engine takes: a negative one, or one with a Wait. Every
// engine's Add calls it.
func (p AddParams) ValidateDelay() error {
	switch {
	case p.Delay < 0:
		return fmt.Errorf("store: AddParams.Delay must be >= 0, got %v", p.Delay)
	case p.Delay > 0 && p.Wait > 0:
		return fmt.Errorf("store: AddParams.Delay (%v) and Wait (%v) cannot both be set: a delayed value does not join a burst", p.Delay, p.Wait)
	}
	return nil
}
