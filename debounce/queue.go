package debounce

// keyQueue is a FIFO of keys, the cheap half of the schedule: with one Wait
// for every key, bursts opened later are due later, so a new burst's first
// deadline (first Add plus Wait) goes at the tail of a plain queue, at 8
// bytes a key for int keys instead of a 24-byte heap item. The deadline is
// not stored; it is derived from the entry, whose first Add does not change
// while the item is queued.
type keyQueue[K any] struct {
	items []K
	head  int
}

func (q *keyQueue[K]) len() int { return len(q.items) - q.head }

func (q *keyQueue[K]) push(key K) {
	if len(q.items) == cap(q.items) && q.head >= len(q.items)/2 {
		// Reuse the consumed front, when it is large, before growing.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, key)
}

func (q *keyQueue[K]) peek() K { return q.items[q.head] }

func (q *keyQueue[K]) pop() {
	var zero K
	q.items[q.head] = zero // let the key be collected
	q.head++
	if q.head == len(q.items) {
		if cap(q.items) > 1024 {
			q.items = nil // give a drained burst of keys back to the GC
		} else {
			q.items = q.items[:0]
		}
		q.head = 0
	}
}
