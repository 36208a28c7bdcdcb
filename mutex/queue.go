package mutex

// waiter is one blocked Lock or LockContext call.
type waiter struct {
	ready      chan struct{} // closed when the key is handed over
	granted    bool          // set with ready closed, under the shard lock
	prev, next *waiter
}

// queue is the FIFO list of a key's waiters. The zero value is empty.
// Removal from the middle is O(1) so a cancelled waiter leaves cheaply.
type queue struct {
	head, tail *waiter
}

func (q *queue) push(w *waiter) {
	w.prev = q.tail
	if q.tail == nil {
		q.head = w
	} else {
		q.tail.next = w
	}
	q.tail = w
}

// pop removes and returns the first waiter, or nil if q is empty.
func (q *queue) pop() *waiter {
	w := q.head
	if w != nil {
		q.remove(w)
	}
	return w
}

// remove unlinks w, which must be in q.
func (q *queue) remove(w *waiter) {
	if w.prev == nil {
		q.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		q.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
}
