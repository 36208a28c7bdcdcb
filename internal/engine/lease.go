package engine

import (
	"time"

	"github.com/pacerkit/pacer/fifo"
	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/store"
)

// A Lease is the exclusive right to handle the first Values of a key. It
// is ended by one Engine.Finish, unless it was lost (see Engine.Keep).
//
// It carries the engine's own lease as a value, so that the engine in the
// process hands a lease out without an allocation: Local for that engine,
// Remote for one that processes share.
type Lease[K comparable, V any] struct {
	Key     K
	Values  []V
	Attempt int // 1 for the first handling of these values
	// Carried holds, for each of Values, the bytes it carries from its
	// Put (the Runner's Config.Carry); nil when the engine carries none.
	Carried [][]byte

	// Local is the lease of the engine in the process; zero otherwise.
	Local fifo.Lease[K, V]
	// Remote is the lease of an engine that processes share; nil
	// otherwise.
	Remote *Remote
}

// Remote is what an engine that processes share keeps of a store lease.
type Remote struct {
	Lease store.Lease
	// Claimed is when the Claim that got the lease was sent, on the
	// Runner's clock: the lease lasts its TTL from then at least.
	Claimed time.Time
	// Deadline is when the Runner stops working under the lease, by its
	// own clock: Life after Claimed, moved by each renewal that succeeded.
	Deadline *Deadline
	// Keeper, once the Runner keeps the lease (Engine.Keep), is what keeps
	// it; nil before.
	Keeper Keeper
	// Err says why some of the lease's values, or its key, could not be
	// decoded; Values holds those that could.
	Err error
}

// NewRemote returns the Remote of store lease l, claimed by a call sent at
// claimed, with the Deadline of a lease of ttl granted by that call: Life
// after claimed. Both are one allocation.
func NewRemote(l store.Lease, claimed time.Time, ttl time.Duration) *Remote {
	r := &struct {
		Remote
		d Deadline
	}{Remote: Remote{Lease: l, Claimed: claimed}, d: Deadline{ttl: ttl, at: claimed.Add(Life(ttl))}}
	r.Deadline = &r.d
	return &r.Remote
}

// A Keeper keeps a lease alive while the Runner works on it, on a
// goroutine of its own, which also makes the call that ends the lease.
type Keeper interface {
	// End runs call, the call that ends the lease, on the keeper's
	// goroutine, and reports whether it will: false if the keeper is gone,
	// having lost the lease.
	End(call Job) bool
}

// A Job is work handed to another goroutine. An interface rather than a
// func, so that the state of a call that is a Job already hands itself
// over with no closure to allocate.
type Job interface{ Run() }

// JobFunc is a func as a Job.
type JobFunc func()

// Run calls f.
func (f JobFunc) Run() { f() }

// Unreadable returns why l's values could not all be decoded, or nil.
func (l Lease[K, V]) Unreadable() error {
	if l.Remote == nil {
		return nil
	}
	return l.Remote.Err
}

// Lapsed reports whether l's Deadline passed on clk: the lease may be
// another holder's, so l must be neither handled nor finished. A lease of
// the engine in the process never lapses, and costs no reading of the
// clock.
func (l Lease[K, V]) Lapsed(clk timing.Clock) bool {
	return l.Remote != nil && l.Remote.Deadline.Lapsed(clk.Now())
}
