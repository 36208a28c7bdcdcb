package debounce

import (
	"math"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
)

// openBurst opens a burst with quiet period w for key at now, on e, the
// key's entry if it has one. It returns the entry, a new one if e had to be
// replaced, and whether the loop must be woken. With Leading, the burst
// leads (led) if the key is quiet.
func (k *Keyed[K, V]) openBurst(key K, e *entry[V], now int64, w time.Duration) (*entry[V], bool) {
	lead := k.leading && (e == nil || k.quiet(key, e, now))
	first := timing.AddNanos(now, w) // w is at most MaxWait: the first deadline
	x := ext{wait: w, hold: math.MinInt64}
	if e != nil && e.state&hasExt != 0 {
		x.hold = k.ext[key].hold
	}
	wake := false
	switch {
	case e == nil:
		e = &entry[V]{}
		k.entries[key] = e
		k.peak = max(k.peak, len(k.entries))
		wake = k.schedule(key, e, first)
	case e.state&inHeap == 0:
		// The fifo item's deadline is derived from first, which changes:
		// leave it behind as an orphan, which the loop skips. If it is due
		// after the new item, hold the entry until it is gone (see ext).
		if orphan := k.firstDeadline(key, e); first < orphan {
			x.hold = max(x.hold, timing.AddNanos(orphan, 1))
		}
		wake = k.push(key, e, first)
	case first < k.latest(key, e):
		// The heap item may be due after first: replace the entry, which
		// leaves the item behind as an orphan. A fifo orphan the entry left
		// may still be queued, due no later than the heap item: hold the
		// new entry until then too (see ext).
		x.hold = max(x.hold, timing.AddNanos(k.latest(key, e), 1))
		e = &entry[V]{state: e.state & hasExt}
		k.entries[key] = e
		wake = k.push(key, e, first)
	}
	// Any other item in the heap stays: it is due no later than first.
	k.setExt(key, e, x)
	k.seq++
	e.state = e.state&(inHeap|hasExt) | k.seq
	if lead {
		e.state |= led
	}
	e.first, e.last = now, now
	k.open++
	return e, wake
}

// setExt records x for e, or drops the record when x is the common case:
// Config.Wait and no hold.
func (k *Keyed[K, V]) setExt(key K, e *entry[V], x ext) {
	if x.wait == k.wait && x.hold == math.MinInt64 {
		if e.state&hasExt != 0 {
			delete(k.ext, key)
			e.state &^= hasExt
		}
		return
	}
	if k.ext == nil {
		k.ext = make(map[K]ext)
	}
	k.ext[key] = x
	e.state |= hasExt
}

// schedule gives a new entry its item at its first deadline: in fifo
// unless that would be out of order (the clock went back, or a shorter
// AddWait), and reports whether the loop must be woken.
func (k *Keyed[K, V]) schedule(key K, e *entry[V], at int64) bool {
	if at >= k.fifoLast {
		k.fifo.push(key)
		k.fifoLast = at
		return k.fifo.len() == 1
	}
	return k.push(key, e, at)
}

// push gives e a heap item at at and reports whether it is the earliest.
func (k *Keyed[K, V]) push(key K, e *entry[V], at int64) bool {
	e.state |= inHeap
	return k.heap.Push(ref[K, V]{key, e}, at)
}

// overdue hands e's open burst over at its own deadline if that is not
// after now, and reports whether it did: the burst is over even though the
// loop has not taken it yet.
func (k *Keyed[K, V]) overdue(key K, e *entry[V], now int64) bool {
	d := k.deadline(key, e)
	if d > now {
		return false
	}
	k.handOver(key, e, d, e.seq())
	return true
}

// handOver ends e's burst and queues it to fire, ordered by (at, seq).
func (k *Keyed[K, V]) handOver(key K, e *entry[V], at int64, seq uint64) {
	if len(e.vals) > 0 {
		k.ready = append(k.ready, k.due(key, e, at, seq))
	}
	k.end(e)
}

// end closes e's burst; e stays until its schedule item comes due.
func (k *Keyed[K, V]) end(e *entry[V]) {
	e.vals = nil
	e.state &= inHeap | hasExt
	k.open--
}
