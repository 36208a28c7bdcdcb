package debounce

import "github.com/pacerkit/pacer/internal/timing"

// entry is the state of one key. Times are readings of k.ns (Unix
// nanoseconds); the deadline is derived from first and last rather than
// stored. Deadlines saturate at math.MaxInt64, the end of time, so that a
// Wait or MaxWait meaning "forever" never wraps into the past.
//
// Every entry has exactly one live schedule item: in fifo at first+Wait
// when it was created, or in the heap (inHeap set) once that item turned
// out stale and was pushed again at the real deadline. Items only ever come
// early, never late.
//
// An entry outlives its burst when the burst ends early (Flush, Cancel, a
// full MaxItems burst): it stays, with a zero seq, until its item comes due,
// so a key never has two live items. With Leading it stays, beyond that,
// until its key is quiet (its last Add plus Wait), so that a burst that
// opens before then does not lead. A burst that reopens it keeps the item
// if it is in the heap (it is no later than the new deadline); a fifo item,
// whose deadline is derived from first, is left behind as an orphan, which
// the loop skips, and the entry moves to the heap.
type entry[V any] struct {
	vals  []V
	first int64
	last  int64
	state uint64 // scheduling order of the open burst (0 when none is open) | flags
}

const (
	inHeap = 1 << 63 // the entry's schedule item is in the heap, not in fifo
	led    = 1 << 62 // the open burst's first value fired at the leading edge
	forgot = 1 << 61 // Cancel forgot the key's Adds: it counts as quiet
	flags  = inHeap | led | forgot
)

// seq returns the scheduling order of e's open burst, or 0 if none is open.
func (e *entry[V]) seq() uint64 { return e.state &^ flags }

// deadline is when e's burst fires: Wait after its last Add, but no later
// than MaxWait after its first.
func (k *Keyed[K, V]) deadline(e *entry[V]) int64 {
	d := timing.AddNanos(e.last, k.wait)
	if k.maxWait > 0 {
		d = min(d, timing.AddNanos(e.first, k.maxWait))
	}
	return d
}

// quiet reports whether e's key has had no Add for Wait at now, or Cancel
// forgot its Adds.
func (k *Keyed[K, V]) quiet(e *entry[V], now int64) bool {
	return e.state&forgot != 0 || timing.AddNanos(e.last, k.wait) <= now
}

// due is a burst ready to fire, ordered by (at, seq). It becomes a Burst
// only when fire is called, which keeps the loop's batches small.
type due[K comparable, V any] struct {
	at          int64
	seq         uint64
	first, last int64
	key         K
	vals        []V
	count       int
}

// due takes e's burst, to fire at at.
func (k *Keyed[K, V]) due(key K, e *entry[V], at int64, seq uint64) due[K, V] {
	n := len(e.vals)
	if e.state&led != 0 {
		n++ // the value that fired at the leading edge
	}
	return due[K, V]{at: at, seq: seq, first: e.first, last: e.last, key: key, vals: e.vals, count: n}
}
