package debounce

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// run is the loop's step: it collects the bursts that are due, a chunk at a
// time, fires them in (deadline, scheduling order) without holding the
// lock, and returns the next deadline.
func (k *Keyed[K, V]) run(loopNow time.Time) (time.Time, bool) {
	k.mu.Lock()
	now := k.nanos()
	batch := append(k.batch[:0], k.ready...)
	if cap(k.ready) > 4096 {
		k.ready = nil // a burst of hand-overs is over: give it back
	} else {
		clear(k.ready)
		k.ready = k.ready[:0]
	}
	batch = k.collect(batch, now, k.chunk)
	k.mu.Unlock()

	// Hand-overs, heap and fifo items interleave by deadline; each part is
	// mostly sorted already.
	slices.SortFunc(batch, func(a, b due[K, V]) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
	})
	for i := range batch {
		k.call(&batch[i])
		batch[i] = due[K, V]{}
	}

	k.mu.Lock()
	defer k.mu.Unlock()
	if cap(batch) > 4096 && k.fifo.len() == 0 && k.heap.Len() == 0 {
		k.batch = nil // idle: give a large batch back
	} else {
		k.batch = batch[:0]
	}
	if k.closed && len(k.ready) == 0 && !k.isDrain {
		k.isDrain = true
		close(k.drained)
	}
	if len(k.ready) > 0 {
		return loopNow, true
	}
	at, ok := k.next()
	if !ok {
		return time.Time{}, false
	}
	// Deadlines are on the debouncer's own monotonic nanos; loopNow and now
	// are the same instant on both scales.
	return loopNow.Add(until(at, now)), true
}

// until returns at-now, saturated: at may be the end of time and now, on a
// clock set before 1970, negative.
func until(at, now int64) time.Duration {
	d := at - now
	switch {
	case at > now && d < 0:
		return math.MaxInt64
	case at < now && d > 0:
		return math.MinInt64
	}
	return time.Duration(d)
}

// next returns the earliest item's deadline.
func (k *Keyed[K, V]) next() (int64, bool) {
	_, e, at, _ := k.earliest()
	return at, e != nil
}

// fifoHead returns the first live fifo item and its deadline, dropping the
// orphans before it.
func (k *Keyed[K, V]) fifoHead() (key K, e *entry[V], at int64) {
	for k.fifo.len() > 0 {
		key = k.fifo.peek()
		if e = k.entries[key]; e != nil && e.state&inHeap == 0 {
			return key, e, k.firstDeadline(key, e)
		}
		k.fifo.pop()
	}
	return key, nil, 0
}

// heapHead returns the first live heap item, dropping the orphans before
// it: items of an entry that is no longer its key's.
func (k *Keyed[K, V]) heapHead() (key K, e *entry[V], at int64) {
	for {
		r, at, ok := k.heap.Peek()
		if !ok {
			return key, nil, 0
		}
		if k.entries[r.key] == r.e {
			return r.key, r.e, at
		}
		k.heap.Pop()
	}
}

// collect takes the items due at now from the heap and fifo, earliest
// first, and appends the bursts that are due to batch, which may already
// hold hand-overs. It stops after limit bursts, so that Adds are not held up
// and batches stay small, but only once the next item is due later than
// every burst in batch: a stale item may turn out due earlier than its
// place in the schedule, so everything in batch must be ahead of whatever
// is left for fire order to be exact.
func (k *Keyed[K, V]) collect(batch []due[K, V], now int64, limit int) []due[K, V] {
	latest := int64(math.MinInt64)
	for i := range batch {
		latest = max(latest, batch[i].at)
	}
	n := 0
	for {
		key, e, at, fromHeap := k.earliest()
		if e == nil || at > now || (n >= limit && at > latest) {
			return batch
		}
		if fromHeap {
			k.heap.Pop()
		} else {
			k.fifo.pop()
		}
		before := len(batch)
		batch = k.expire(batch, key, e, at, now)
		if len(batch) > before {
			n++
			latest = max(latest, batch[before].at)
		}
	}
}

// earliest returns the earliest item of the heap and fifo, with its entry;
// e is nil if there is none.
func (k *Keyed[K, V]) earliest() (key K, e *entry[V], at int64, fromHeap bool) {
	hkey, he, hat := k.heapHead()
	fkey, fe, fat := k.fifoHead()
	switch {
	case he != nil && (fe == nil || hat <= fat):
		return hkey, he, hat, true
	case fe != nil:
		return fkey, fe, fat, false
	}
	return key, nil, 0, false
}

// expire handles the item of key, whose entry is e, due at at, at now. If
// the burst got Adds since the item was scheduled, the item goes to the
// heap at the real deadline (lazy update); otherwise its burst, if it has
// values, is appended to batch, and the entry is dropped unless it must
// stay: with Leading until its key is quiet, so that a burst opening before
// then does not lead, and until its hold (see ext).
func (k *Keyed[K, V]) expire(batch []due[K, V], key K, e *entry[V], at, now int64) []due[K, V] {
	if seq := e.seq(); seq != 0 {
		d := k.deadline(key, e)
		if d > now {
			k.push(key, e, d)
			return batch
		}
		if len(e.vals) > 0 {
			batch = append(batch, k.due(key, e, d, seq))
		}
		k.end(e)
	}
	if k.leading && !k.quiet(key, e, now) {
		k.push(key, e, k.quietAt(key, e))
		return batch
	}
	if e.state&hasExt != 0 {
		// The hold is an instant in the schedule, not on the clock: the
		// orphan is gone once the items before the hold have come.
		if h := k.ext[key].hold; h > at {
			k.push(key, e, h)
			return batch
		}
		delete(k.ext, key)
	}
	delete(k.entries, key)
	if len(k.entries) == 0 && k.peak > 1024 {
		// Maps keep their buckets after deletes; give them back when idle.
		k.entries, k.peak = make(map[K]*entry[V]), 0
	}
	if len(k.entries) == 0 {
		k.ext = nil
	}
	return batch
}

// call runs fire. A panic is not recovered: it ends the process, as one in
// time.AfterFunc's f does, rather than losing the burst in silence.
func (k *Keyed[K, V]) call(d *due[K, V]) {
	k.fire(d.key, Burst[V]{Values: d.vals, First: k.ns.Time(d.first), Last: k.ns.Time(d.last), Count: d.count})
}
