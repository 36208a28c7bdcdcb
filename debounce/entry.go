package debounce

import (
	"time"

	"github.com/pacerkit/pacer/internal/timing"
)

// entry is the state of one key. Times are readings of k.ns (Unix
// nanoseconds); the deadline is derived from first, last and the burst's
// quiet period rather than stored. Deadlines saturate at math.MaxInt64, the
// end of time, so that a wait meaning "forever" never wraps into the past.
//
// Every entry has exactly one live schedule item: in fifo at its first
// deadline when it was created, or in the heap (inHeap set) once that item
// turned out stale and was pushed again at the real deadline. Items only
// ever come early, never late.
//
// An entry outlives its burst when the burst ends early (Flush, Cancel, a
// full MaxItems burst): it stays, with a zero seq, until its item comes due,
// so a key never has two live items. With Leading it stays, beyond that,
// until its key is quiet, so that a burst that opens before then does not
// lead. A burst that reopens it keeps a heap item that is due no later than
// the new first deadline. A fifo item, whose deadline is derived from
// first, is left behind as an orphan, which the loop skips, and the entry
// moves to the heap; so is a heap item due later (after a longer AddWait),
// by replacing the entry, for heap items name their entry (ref).
type entry[V any] struct {
	vals  []V
	first int64
	last  int64
	state uint64 // scheduling order of the open burst (0 when none is open) | flags
}

const (
	inHeap = 1 << 63 // the entry's schedule item is in the heap, not in fifo
	hasExt = 1 << 62 // k.ext holds the entry's quiet period and hold
	led    = 1 << 61 // the open burst's first value fired at the leading edge
	forgot = 1 << 60 // Cancel forgot the key's Adds: it counts as quiet
	flags  = inHeap | hasExt | led | forgot
)

// seq returns the scheduling order of e's open burst, or 0 if none is open.
func (e *entry[V]) seq() uint64 { return e.state &^ flags }

// ext is what an entry needs only after AddWait, kept aside so that entry
// stays at 48 bytes.
type ext struct {
	// wait is the quiet period of the entry's burst (its last one if none is
	// open): AddWait's, cut to MaxWait, or Config.Wait.
	wait time.Duration
	// hold is the earliest the entry may be dropped, or math.MinInt64. An
	// AddWait shorter than the burst before can give the entry an item due
	// before a fifo orphan of its key. Were the entry dropped and the key to
	// open a new fifo entry before the orphan is gone, the orphan would pass
	// for that entry's item, due later than the fifo items behind it, and
	// hold them up. The hold is an instant in the schedule: the orphan is
	// gone once the items due before the hold have come.
	hold int64
}

// ref is a heap item: a key and the entry it was pushed for. The item is
// live only while that entry is the key's.
type ref[K comparable, V any] struct {
	key K
	e   *entry[V]
}

// waitOf returns the quiet period of e's burst, or of its last one.
func (k *Keyed[K, V]) waitOf(key K, e *entry[V]) time.Duration {
	if e.state&hasExt != 0 {
		return k.ext[key].wait
	}
	return k.wait
}

// deadline is when e's burst fires: its quiet period after its last Add,
// but no later than MaxWait after its first.
func (k *Keyed[K, V]) deadline(key K, e *entry[V]) int64 {
	d := timing.AddNanos(e.last, k.waitOf(key, e))
	if k.maxWait > 0 {
		d = min(d, timing.AddNanos(e.first, k.maxWait))
	}
	return d
}

// firstDeadline is the deadline e's burst had when it opened, which is
// that of its fifo item if it has one: a quiet period is at most MaxWait.
func (k *Keyed[K, V]) firstDeadline(key K, e *entry[V]) int64 {
	return timing.AddNanos(e.first, k.waitOf(key, e))
}

// quietAt returns when e's key becomes quiet: its burst's quiet period
// after its last Add.
func (k *Keyed[K, V]) quietAt(key K, e *entry[V]) int64 {
	return timing.AddNanos(e.last, k.waitOf(key, e))
}

// quiet reports whether e's key is quiet at now, or Cancel forgot its Adds.
func (k *Keyed[K, V]) quiet(key K, e *entry[V], now int64) bool {
	return e.state&forgot != 0 || k.quietAt(key, e) <= now
}

// latest returns the latest time e's schedule item can be due: items are
// pushed at a deadline, which is no later than quietAt, at quietAt, or at
// the hold.
func (k *Keyed[K, V]) latest(key K, e *entry[V]) int64 {
	t := k.quietAt(key, e)
	if e.state&hasExt != 0 {
		t = max(t, k.ext[key].hold)
	}
	return t
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
