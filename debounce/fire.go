package debounce

import (
	"cmp"
	"slices"
	"time"
)

// run is the loop's step: it collects every burst that is due, fires them
// in (deadline, scheduling order) without holding the lock, and returns the
// next deadline.
func (k *Keyed[K, V]) run(loopNow time.Time) (time.Time, bool) {
	k.mu.Lock()
	now := k.nanos()
	batch := append(k.batch[:0], k.ready...)
	clear(k.ready)
	k.ready = k.ready[:0]
	batch = k.collect(batch, now)
	k.mu.Unlock()

	// Hand-overs and heap items interleave by deadline; both are mostly
	// sorted already.
	slices.SortFunc(batch, func(a, b due[K, V]) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
	})
	for i := range batch {
		k.call(&batch[i])
		batch[i] = due[K, V]{}
	}

	k.mu.Lock()
	defer k.mu.Unlock()
	if cap(batch) <= 4096 {
		k.batch = batch[:0]
	} else {
		k.batch = nil
	}
	if k.closed && len(k.ready) == 0 && !k.isDrain {
		k.isDrain = true
		close(k.drained)
	}
	if len(k.ready) > 0 {
		return loopNow, true
	}
	_, at, ok := k.heap.Peek()
	if !ok {
		return time.Time{}, false
	}
	// The loop arms its timer at next.Sub(loopNow), with loopNow taken
	// before this call: express the deadline relative to loopNow, less the
	// time spent here, so a long batch does not delay the next one.
	return loopNow.Add(time.Duration(at - k.nanos())), true
}

// collect pops the heap items due at now. A stale item (its burst got more
// Adds since it was pushed) goes back at the burst's real deadline; a due
// burst is removed from entries and appended to batch.
func (k *Keyed[K, V]) collect(batch []due[K, V], now int64) []due[K, V] {
	for {
		key, at, ok := k.heap.Peek()
		if !ok || at > now {
			return batch
		}
		k.heap.Pop()
		e := k.entries[key]
		if e.seq != 0 {
			if d := k.deadline(e); d > now {
				k.heap.Push(key, d)
				continue
			}
			if len(e.vals) > 0 {
				batch = append(batch, due[K, V]{at: k.deadline(e), seq: e.seq, key: key, b: k.burst(e)})
			}
			k.open--
		}
		delete(k.entries, key)
		if len(k.entries) == 0 && k.peak > 1024 {
			// Maps keep their buckets after deletes; give them back when idle.
			k.entries, k.peak = make(map[K]*entry[V]), 0
		}
	}
}

// call runs fire, recovering a panic so the loop lives on.
func (k *Keyed[K, V]) call(d *due[K, V]) {
	defer func() { _ = recover() }()
	k.fire(d.key, d.b)
}

// deadline is when e's burst fires: Wait after its last Add, but no later
// than MaxWait after its first.
func (k *Keyed[K, V]) deadline(e *entry[V]) int64 {
	d := e.last + k.wait
	if k.maxWait > 0 {
		d = min(d, e.first+k.maxWait)
	}
	return d
}

// burst builds what fire receives from e.
func (k *Keyed[K, V]) burst(e *entry[V]) Burst[V] {
	n := len(e.vals)
	if k.leading {
		n++
	}
	return Burst[V]{Values: e.vals, First: unixTime(e.first), Last: unixTime(e.last), Count: n}
}

func unixTime(ns int64) time.Time { return time.Unix(0, ns) }
