package shared

import "sync"

// A freeList keeps up to max things stopped for reuse (timers, alarms),
// so that the next user takes one instead of making one. Unlike a
// sync.Pool, it keeps what it is given until it is full.
type freeList[T any] struct {
	mu    sync.Mutex
	items []T
	max   int
}

// get takes a kept thing, if there is one.
func (f *freeList[T]) get() (T, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var zero T
	n := len(f.items)
	if n == 0 {
		return zero, false
	}
	x := f.items[n-1]
	f.items[n-1] = zero
	f.items = f.items[:n-1]
	return x, true
}

// put keeps x, unless the list is full.
func (f *freeList[T]) put(x T) {
	f.mu.Lock()
	if len(f.items) < f.max {
		f.items = append(f.items, x)
	}
	f.mu.Unlock()
}

// len reports how many things are kept.
func (f *freeList[T]) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.items)
}
