// Package sched holds the single-timer scheduler shared by the debouncer and
// the delayed adds of the queues: a min-heap of deadlines and one goroutine
// with one timer that sleeps until the earliest of them.
package sched

// Heap is a min-heap of keys ordered by (deadline, sequence): equal deadlines
// come out in the order they were pushed. The zero value is an empty heap.
// It is not safe for concurrent use; its owner guards it with its own lock.
//
// A key may be pushed more than once. Owners that only ever move a key's
// deadline later keep one entry and, when it pops, compare it with the key's
// real deadline and push it again (lazy update), which keeps the hot path of
// "push the deadline back" free of heap work.
type Heap[K any] struct {
	items []item[K]
	seq   uint64
}

type item[K any] struct {
	at  int64 // deadline in Unix nanoseconds
	seq uint64
	key K
}

func (a *item[K]) less(b *item[K]) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// Len returns the number of entries.
func (h *Heap[K]) Len() int { return len(h.items) }

// Push adds key with deadline at (Unix nanoseconds). It reports whether the
// new entry is now the earliest, in which case a sleeping loop must be woken.
func (h *Heap[K]) Push(key K, at int64) (earliest bool) {
	h.seq++
	h.items = append(h.items, item[K]{at: at, seq: h.seq, key: key})
	return h.up(len(h.items)-1) == 0
}

// Peek returns the earliest entry without removing it.
func (h *Heap[K]) Peek() (key K, at int64, ok bool) {
	if len(h.items) == 0 {
		return key, 0, false
	}
	return h.items[0].key, h.items[0].at, true
}

// Pop removes and returns the earliest entry.
func (h *Heap[K]) Pop() (key K, at int64, ok bool) {
	n := len(h.items)
	if n == 0 {
		return key, 0, false
	}
	top := h.items[0]
	h.items[0] = h.items[n-1]
	var zero item[K]
	h.items[n-1] = zero // let the key be collected
	h.items = h.items[:n-1]
	if n > 1 {
		h.down(0)
	}
	if n-1 == 0 && cap(h.items) > 1024 {
		h.items = nil // give a drained burst of keys back to the GC
	}
	return top.key, top.at, true
}

func (h *Heap[K]) up(i int) int {
	for i > 0 {
		p := (i - 1) / 2
		if !h.items[i].less(&h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
	return i
}

func (h *Heap[K]) down(i int) {
	n := len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.items[r].less(&h.items[l]) {
			m = r
		}
		if !h.items[m].less(&h.items[i]) {
			return
		}
		h.items[i], h.items[m] = h.items[m], h.items[i]
		i = m
	}
}

// Walk calls visit with entries of the heap, from the earliest, and with
// the entries below one (none of them earlier than it) only when visit
// returned true for it: a visit that returns true for the entries before
// some bound alone reads them and at most as many more plus one, so that
// the entries before a bound are found in time proportional to their
// number, whatever the heap holds.
func (h *Heap[K]) Walk(visit func(key K, at int64) bool) {
	h.walk(0, visit)
}

func (h *Heap[K]) walk(i int, visit func(key K, at int64) bool) {
	if i >= len(h.items) || !visit(h.items[i].key, h.items[i].at) {
		return
	}
	h.walk(2*i+1, visit)
	h.walk(2*i+2, visit)
}
