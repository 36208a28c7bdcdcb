// Package callctx carries what a pacer Runner knows about a handler call to
// the code the handler calls: the attempt number, where to count the time
// spent waiting for rate limits, a token already taken from a Limiter, and
// the fencing token of the call's lease.
// The Runner puts a *Call in every handler's ctx; ratelimit.Transport reads
// it, so the Transport's waits show in the Runner's Stats and a Transport on
// the Runner's own Limiter does not make a call pay twice.
//
// A Call is the context node itself rather than a context.WithValue, so the
// handler's ctx costs one allocation, as a context.WithValue carrying the
// attempt number alone would.
package callctx

import (
	"context"
	"math"
	"reflect"
	"sync/atomic"
	"time"
)

// A Call is a handler's ctx: its parent plus what the Runner knows about
// the call. Its fields are set before the handler runs and not changed
// afterwards.
//
// The fields are laid out to fit 48 bytes, the allocation size class of
// the context.WithValue node that would carry the attempt number alone.
type Call struct {
	context.Context
	// Paid is the limiter from which the Runner took one token for the
	// call, or nil.
	Paid any
	// Waited, when not nil, adds up the nanoseconds spent waiting for a
	// rate limit during the call.
	Waited *atomic.Int64
	// Attempt is 1 for a batch's first handler call, 2 for its first
	// retry; see Attempt32.
	Attempt int32

	spent atomic.Bool // the paid token was used
}

// Attempt32 returns n as an Attempt, saturated at math.MaxInt32.
func Attempt32(n int) int32 { return int32(min(n, math.MaxInt32)) }

type key struct{}

// Value returns c itself for the package's key, and asks the parent for any
// other key.
func (c *Call) Value(k any) any {
	if k == (key{}) {
		return c
	}
	return c.Context.Value(k)
}

// From returns the Call that ctx descends from, or nil.
func From(ctx context.Context) *Call {
	c, _ := ctx.Value(key{}).(*Call)
	return c
}

type fenceKey struct{}

// WithFence returns ctx carrying fence, the fencing token of the lease a
// handler runs under, for Fence.
func WithFence(ctx context.Context, fence uint64) context.Context {
	return &Fenced{Context: ctx, Fence: fence}
}

// A Fenced is its Context carrying Fence, the fencing token of the lease
// a handler runs under, for the package's Fence: what WithFence returns,
// as a value that its maker may keep inside an allocation of its own.
type Fenced struct {
	context.Context
	Fence uint64
}

// Value returns the fence for the package's fence key, and asks the
// parent for any other key.
func (f *Fenced) Value(k any) any {
	if k == (fenceKey{}) {
		return f.Fence
	}
	return f.Context.Value(k)
}

// Fence returns the fencing token that ctx carries, and whether it
// carries one.
func Fence(ctx context.Context) (fence uint64, ok bool) {
	fence, ok = ctx.Value(fenceKey{}).(uint64)
	return fence, ok
}

// AddWait counts d as time spent waiting for a rate limit. c may be nil.
func (c *Call) AddWait(d time.Duration) {
	if c != nil && c.Waited != nil {
		c.Waited.Add(int64(d))
	}
}

// Counting reports whether AddWait counts, so that callers read the clock
// only then.
func (c *Call) Counting() bool { return c != nil && c.Waited != nil }

// TakePaid reports whether a request paced by l may use the token paid for
// the call instead of waiting for one: l is the limiter paid, and no
// request took the token yet. It reports true at most once. c may be nil.
func (c *Call) TakePaid(l any) bool {
	if c == nil || c.Paid == nil || c.spent.Load() || !same(c.Paid, l) {
		return false
	}
	return c.spent.CompareAndSwap(false, true)
}

// same reports whether a and b are the same limiter. Comparing interface
// values whose dynamic type is not comparable panics (ratelimit.All returns
// such a value); such limiters are never the same. When a's value is
// comparable, a == b cannot panic: it would need b to hold, at the same
// place, a value of the same type that is not comparable, and a holds none.
func same(a, b any) bool {
	return reflect.TypeOf(a) == reflect.TypeOf(b) && reflect.ValueOf(a).Comparable() && a == b
}

type carriedKey struct{}

// WithCarried returns ctx carrying the bytes that each value of a
// handler's batch carried from its Add, for Carried.
func WithCarried(ctx context.Context, carried [][]byte) context.Context {
	return context.WithValue(ctx, carriedKey{}, carried)
}

// Carried returns the bytes that ctx carries for the values of a batch,
// or nil.
func Carried(ctx context.Context) [][]byte {
	c, _ := ctx.Value(carriedKey{}).([][]byte)
	return c
}
