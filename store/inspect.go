package store

import (
	"context"
	"time"
)

// Inspector is implemented by engines that let an operator see what they
// hold: the queues, each queue's keys and what each key is doing, and a
// key's values. It only reads; it never changes what it shows, nor when
// anything runs. Its calls are bounded: Queues costs O(queues) plus a
// Stats per queue (which, on Memory, visits every key of the queue), a
// page of Keys reads O(Limit) entries of the engine's indexes whatever the
// queue holds (never a command over the whole keyspace), Values
// O(limit).
//
// Paging walks a queue's keys in an order of the engine's choosing that
// stays the same from page to page (by key for redisstore, by the keys'
// SHA-256 for pgstore, in the order the keys were created for Memory).
// A page shows each key as it was when the page read it: a key that comes
// or goes meanwhile may or may not be shown, but a key that holds values
// all along, and passes the filter all along, is shown exactly once over
// the pages. A filter that few keys pass may give short pages, even empty
// ones, with a Next: the engine stops reading after a bounded number of
// entries, so that no call waits on the whole queue.
type Inspector interface {
	// Queues returns the queues that hold values or dead letters, with
	// their counts, ordered by name.
	Queues(ctx context.Context) ([]QueueInfo, error)
	// Keys returns a page of queue's keys that q selects and the cursor
	// of the next page ("" after the last). A page shows the keys that
	// hold values: a paused key without values is read with Key.
	Keys(ctx context.Context, queue string, q KeyQuery) (KeyPage, error)
	// Key returns what one key of queue is doing; ok is false, and info
	// zero, when the key holds no values and is not paused. A paused key
	// without values has State 0 ("empty") and Paused.
	Key(ctx context.Context, queue, key string) (info KeyInfo, ok bool, err error)
	// Values returns up to limit of key's values from its head, in the
	// order they will be leased (those out on a lease and those of an
	// open burst included), each with when it was added. A limit below 1
	// returns none.
	Values(ctx context.Context, queue, key string, limit int) ([]StoredValue, error)
}

// QueueInfo is a queue and its counts.
type QueueInfo struct {
	Name  string `json:"name"`
	Stats Stats  `json:"stats"`
	// Oldest is when the first value of the queue's first ready key, the
	// one a Claim would lease next, was added (zero when no key is ready):
	// how long the work at the front of the queue has waited. It is read
	// from the front of the ready order, not from every ready key, so that
	// it costs the same whatever the queue holds.
	Oldest time.Time `json:"oldest,omitzero"`
}

// MaxAhead bounds KeyInfo.Ahead and KeyInfo.TenantsAhead, so that
// reading them costs at most O(MaxAhead) each whatever the queue holds
// (plus, on some engines, the stale entries a Claim would pass over too;
// see each engine's Key).
const MaxAhead = 10000

// KeyQuery selects a page of a queue's keys.
type KeyQuery struct {
	// State, when not zero, keeps only the keys in that state.
	State KeyState
	// Prefix keeps only the keys that start with it.
	Prefix string
	// Cursor is the Next of the page before; "" starts at the first key.
	Cursor string
	// Limit is the most keys in the page: 100 when 0 or less, at most
	// 1000.
	Limit int
}

// KeyPage is one page of keys.
type KeyPage struct {
	Keys []KeyInfo `json:"keys"`
	// Next is the cursor of the next page, "" when this page is the last.
	// A cursor is opaque; it stays valid while keys come and go.
	Next string `json:"next,omitempty"`
}

// KeyState is what a key with values is doing, by its head batch.
type KeyState uint8

// The states of a key. A key is in exactly one.
const (
	// Debouncing: the key's only values are an open burst, ready at
	// KeyInfo.Until (the quiet period's end or, if KeyInfo.MaxWait, the
	// burst's max-wait deadline).
	Debouncing KeyState = iota + 1
	// Ready: waiting for a Claim, since KeyInfo.Since, the instant it
	// took its place in the ready order: the Add that made it ready, its
	// burst's deadline, the end of its retry or deferral delay, the Finish
	// or Release that put it back, or, for a lease whose TTL passed (which
	// counts as ready again), the lease's expiry.
	Ready
	// Leased: out on a lease since KeyInfo.Since, until KeyInfo.Until
	// unless renewed, with KeyInfo.Fence, Attempt and Holder.
	Leased
	// Retrying: its head batch failed KeyInfo.Attempt times, the last with
	// KeyInfo.Err, and is not ready before KeyInfo.Until.
	Retrying
	// Held: out of the ready order since KeyInfo.Since, until Release,
	// with KeyInfo.Err when the batch that held it said why.
	Held
	// Deferred: its head batch was deferred (it did not get its chance)
	// and is not ready before KeyInfo.Until.
	Deferred
	// Scheduled: its first value was added with AddParams.Delay and is
	// not due before KeyInfo.Until; the key's other values wait behind
	// it.
	Scheduled
)

// String returns the state's name in lower case, as the constants spell it.
func (s KeyState) String() string {
	switch s {
	case Debouncing:
		return "debouncing"
	case Ready:
		return "ready"
	case Leased:
		return "leased"
	case Retrying:
		return "retrying"
	case Held:
		return "held"
	case Deferred:
		return "deferred"
	case Scheduled:
		return "scheduled"
	case 0:
		return "empty"
	}
	return "unknown"
}

// KeyInfo is what a key is doing, read at one instant, on the engine's
// clock.
type KeyInfo struct {
	Key   string   `json:"key"`
	State KeyState `json:"state"`
	// Since is when the key entered its state: ready, leased or held
	// since. Zero for the other states.
	Since time.Time `json:"since,omitzero"`
	// Until is when the state ends by itself: the burst's deadline, the
	// lease's expiry, the retry's or the deferral's end, the time of a
	// Scheduled key's first value. Zero for Ready and Held.
	Until time.Time `json:"until,omitzero"`
	// MaxWait reports, for a Debouncing key, that Until is the burst's
	// max-wait deadline rather than the end of its quiet period: that the
	// max-wait deadline came first (when both fall at once, MaxWait is
	// false).
	MaxWait bool `json:"max_wait,omitempty"`
	// Attempt is the Lease.Attempt of the head batch's last lease: the
	// current one (Leased), the one that failed (Retrying: the batch
	// failed that many times), that held it (Held), that was deferred, or
	// that lapsed. It is 0 while the head batch was not leased: a batch
	// that was never leased, or whose attempts Release started over.
	Attempt int `json:"attempt"`
	// Fence is the fence of the key's last lease since it last held no
	// values (Leased: the current lease's); 0 when there was none.
	Fence uint64 `json:"fence,omitempty"`
	// Holder names the holder of the lease (ClaimParams.Holder), for a
	// Leased key; "" when the claim named none, and in the other states.
	Holder string `json:"holder,omitempty"`
	// Leases counts the key's leases whose TTL has not passed when it has
	// more than one out at once (ClaimParams.PerKey, see PerKeyClaimer),
	// up to PerKey; 0 otherwise, when State tells whether one is out. A
	// key with several is Leased (unless held), and Since, Until, Fence,
	// Attempt, Holder and Err are those of the lease whose values come
	// first in the key.
	Leases int `json:"leases,omitempty"`
	// Err is the Outcome.Err of the head batch's last Retry or Hold, kept
	// whatever the key does next (a lease, a lapse, a Defer) until the
	// batch is acked, dropped or released; "" when there was none, or
	// when that Retry or Hold gave none.
	Err string `json:"error,omitempty"`
	// Values counts the key's values, its open burst included.
	Values int `json:"values"`
	// Oldest is when its oldest value was added.
	Oldest time.Time `json:"oldest,omitzero"`
	// Ahead is, for a Ready key that is not paused, read by Key (not in a
	// page of Keys), how many ready keys a Claim would lease before it
	// (paused keys are not leased, and do not count), counted up to
	// MaxAhead (a key with more ahead shows MaxAhead); 0 otherwise. A
	// paused queue leases nothing, but its keys show where they stand.
	// With tenants (AddParams.Tenant), it counts the ready keys of the
	// key's own tenant ahead of it: its tenant's turns come between the
	// other tenants', in proportion to the weights.
	Ahead int `json:"ahead,omitempty"`
	// TenantsAhead is, for a Ready key that is not paused, read by Key
	// (not in a page of Keys), in a queue with tenants (FairTenants, once
	// an Add named a tenant), how many other tenants take a turn before
	// the key's tenant takes its next one: the tenants with a key that is
	// ready and not paused whose virtual time is lower than that of the
	// key's tenant, or the same with a smaller name (Claim's order of the
	// turns, see Fairness in the package doc); a tenant whose ready keys
	// no Claim has seen yet counts with the virtual time it takes then,
	// the larger of its own and the queue's clock. The key's own tenant is
	// never counted: its keys before the key are in Ahead, and the key
	// itself is leased at its tenant's turn Ahead+1 from now, the other
	// tenants taking theirs in between, in proportion to the weights.
	// The keys without a tenant are the tenant "" in this count. A tenant
	// that gets a ready key later may still come first, from the queue's
	// clock. It is counted up to MaxAhead (a key with more tenants ahead
	// shows MaxAhead); 0 otherwise: for a key that is not Ready, is
	// paused, or is in a queue without tenants. A paused queue's keys
	// show where they stand.
	TenantsAhead int `json:"tenants_ahead,omitempty"`
	// Paused reports that an Operator paused the key: it is not leased
	// until ResumeKey, whatever State says its values are doing.
	Paused bool `json:"paused,omitempty"`
	// ForToken reports, for a Deferred key, that a Claim deferred it for
	// its ClaimParams.KeyRate token (see KeyRateClaimer), due at Until;
	// false for any other deferral, and on an engine that cannot tell.
	ForToken bool `json:"for_token,omitempty"`
}

// StoredValue is a value as an engine keeps it.
type StoredValue struct {
	Value []byte    `json:"value"`
	Added time.Time `json:"added,omitzero"` // on the engine's clock
}
