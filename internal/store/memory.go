package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/fifo"
	"github.com/pacerkit/pacer/internal/sched"
	"github.com/pacerkit/pacer/internal/timing"
)

var _ Store[string, int] = (*Memory[string, int])(nil)

// Memory is the in-process Store: a fifo.Groups for the order and the
// leases, plus the bookkeeping the Runner needs on top of it (values per
// key, to tell a rerun; retry delays and attempt counts, so that values
// waiting for a retry can still be handed back on Close).
//
// Retries are built from Groups.Hold and Groups.Release with one timer
// goroutine for all keys, started on the first delayed retry; fifo's own
// Retry parks delayed keys for good after shutdown, which would lose them.
type Memory[K comparable, V any] struct {
	g   *fifo.Groups[K, V]
	clk timing.Clock

	mu       sync.Mutex
	counts   map[K]int      // values stored per key, leased included
	total    int            // sum of counts
	tries    map[K]int      // attempts used by the head of a retried key
	retried  atomic.Int64   // len(tries), read without the lock by Get
	due      map[K]int64    // retry deadline of a delayed key
	held     map[K]struct{} // keys held until Release
	heldVals int            // values of held keys
	heap     sched.Heap[K]
	loop     *sched.Loop
	stopped  bool
	closed   bool
}

// NewMemory returns an empty Memory leasing at most maxBatch values at a
// time (0: all of a key's values).
func NewMemory[K comparable, V any](maxBatch int, clk clock.Clock) (*Memory[K, V], error) {
	g, err := fifo.NewGroups[K, V](fifo.GroupsConfig{MaxBatch: maxBatch, Clock: clk})
	if err != nil {
		return nil, err
	}
	return &Memory[K, V]{
		g:      g,
		clk:    timing.From(clk),
		counts: make(map[K]int),
		tries:  make(map[K]int),
		due:    make(map[K]int64),
		held:   make(map[K]struct{}),
	}, nil
}

// Put implements Store.
func (m *Memory[K, V]) Put(key K, vs ...V) error {
	if len(vs) == 0 {
		return nil
	}
	m.mu.Lock()
	if m.stopped {
		m.mu.Unlock()
		return ErrStopped
	}
	m.count(key, len(vs))
	m.mu.Unlock()
	// Counted first: a lease of key that ends meanwhile sees the values
	// coming and reports more.
	if err := m.g.Put(key, vs...); err != nil {
		m.mu.Lock()
		m.count(key, -len(vs))
		m.mu.Unlock()
		if errors.Is(err, fifo.ErrShutDown) {
			return ErrStopped
		}
		return err
	}
	return nil
}

// count adds n values to key. The caller holds m.mu.
func (m *Memory[K, V]) count(key K, n int) int {
	c := m.counts[key] + n
	if c <= 0 {
		delete(m.counts, key)
	} else {
		m.counts[key] = c
	}
	m.total += n
	if _, ok := m.held[key]; ok {
		m.heldVals += n
	}
	return c
}

// Get implements Store.
func (m *Memory[K, V]) Get(ctx context.Context) (Lease[K, V], error) {
	l, err := m.g.Get(ctx)
	if err != nil {
		if errors.Is(err, fifo.ErrShutDown) {
			err = ErrStopped
		}
		return Lease[K, V]{}, err
	}
	attempt := 1
	if m.retried.Load() > 0 {
		m.mu.Lock()
		if n, ok := m.tries[l.Key]; ok {
			attempt = n + 1
		}
		m.mu.Unlock()
	}
	return Lease[K, V]{Key: l.Key, Values: l.Messages, Attempt: attempt, mem: l}, nil
}

// Ack implements Store.
func (m *Memory[K, V]) Ack(l Lease[K, V]) bool {
	m.g.Ack(l.mem)
	return m.removed(l)
}

// Drop implements Store.
func (m *Memory[K, V]) Drop(l Lease[K, V]) bool {
	m.g.Drop(l.mem)
	return m.removed(l)
}

func (m *Memory[K, V]) removed(l Lease[K, V]) (more bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(l.Key)
	return m.count(l.Key, -len(l.Values)) > 0
}

// Retry implements Store. The key is held in the Groups while it waits and
// released by the timer goroutine.
func (m *Memory[K, V]) Retry(l Lease[K, V], after time.Duration) {
	m.wait(l, after, l.Attempt)
}

// Defer implements Store.
func (m *Memory[K, V]) Defer(l Lease[K, V], after time.Duration) {
	m.wait(l, after, l.Attempt-1)
}

// wait holds l's key for after, recording that its head used tries attempts.
func (m *Memory[K, V]) wait(l Lease[K, V], after time.Duration, tries int) {
	m.g.Hold(l.mem)
	m.mu.Lock()
	m.tries[l.Key] = tries
	m.retried.Store(int64(len(m.tries)))
	if m.stopped {
		// No timer runs after Stop: the key stays parked, and Close hands
		// it back.
		m.due[l.Key] = 0
		m.mu.Unlock()
		return
	}
	if after <= 0 {
		m.mu.Unlock()
		m.g.Release(l.Key)
		return
	}
	at := m.clk.Now().Add(after).UnixNano()
	m.due[l.Key] = at
	earliest := m.heap.Push(l.Key, at)
	if m.loop == nil {
		m.loop = sched.Start(m.clk, m.fire)
	} else if earliest {
		m.loop.Wake()
	}
	m.mu.Unlock()
}

// fire runs on the timer goroutine and releases the keys whose retry delay
// is over.
func (m *Memory[K, V]) fire(now time.Time) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for {
		key, at, ok := m.heap.Peek()
		if !ok {
			return time.Time{}, false
		}
		if at > now.UnixNano() {
			return time.Unix(0, at), true
		}
		m.heap.Pop()
		if due, ok := m.due[key]; ok && due == at {
			delete(m.due, key)
			m.g.Release(key)
		}
	}
}

// forget drops key's attempt count. The caller holds m.mu.
func (m *Memory[K, V]) forget(key K) {
	if len(m.tries) > 0 {
		delete(m.tries, key)
		m.retried.Store(int64(len(m.tries)))
	}
}

// Hold implements Store.
func (m *Memory[K, V]) Hold(l Lease[K, V]) {
	m.g.Hold(l.mem)
	m.mu.Lock()
	m.forget(l.Key)
	m.held[l.Key] = struct{}{}
	m.heldVals += m.counts[l.Key]
	m.mu.Unlock()
}

// Release implements Store.
func (m *Memory[K, V]) Release(key K) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.held[key]; !ok {
		return false
	}
	delete(m.held, key)
	m.heldVals -= m.counts[key]
	return m.g.Release(key)
}

// Len implements Store.
func (m *Memory[K, V]) Len() int { return m.g.Len() }

// Leased implements Store.
func (m *Memory[K, V]) Leased() int { return m.g.Leased() }

// Held implements Store.
func (m *Memory[K, V]) Held() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.held)
}

// Active implements Store.
func (m *Memory[K, V]) Active() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total - m.heldVals
}

// Stop implements Store.
func (m *Memory[K, V]) Stop() {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	m.g.ShutDown()
}

// Close implements Store. Keys waiting for a retry or held are released
// into the ready order so that Groups hands them out one last time.
func (m *Memory[K, V]) Close(left func(key K, vs []V)) {
	m.Stop()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	loop := m.loop
	m.mu.Unlock()
	if loop != nil {
		loop.Stop()
	}
	m.mu.Lock()
	for key := range m.due {
		m.g.Release(key)
	}
	clear(m.due)
	for key := range m.held {
		m.g.Release(key)
	}
	clear(m.held)
	m.heldVals = 0
	m.mu.Unlock()
	for {
		l, err := m.g.Get(context.Background())
		if err != nil {
			return
		}
		left(l.Key, l.Messages)
		m.g.Drop(l)
		m.mu.Lock()
		m.count(l.Key, -len(l.Messages))
		m.mu.Unlock()
	}
}
