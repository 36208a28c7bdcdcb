package local

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/sched"
	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/store"
)

// delays holds the values of the keys that wait for a delayed value: each
// such key has a line of its values, from its first delayed one on, that
// stay out of the Groups until they are due. When a line's head comes due
// the values due from its head go into the Groups, where the key becomes
// ready at the tail of the ready order, and the line keeps the rest. A
// value put while its key has a line joins the line, so a key's values
// keep their order. One heap orders the lines by their head's time, and
// one goroutine (a sched.Loop, started by the first delayed value) moves
// them; a Put to a key without a line, and every lease, cost what they
// did, but for one atomic load.
type delays[K comparable, V any] struct {
	count atomic.Int64 // lines, read without the lock by Put

	mu      sync.Mutex
	lines   map[K]*line[K, V]
	heap    sched.Heap[*line[K, V]] // each line once, at its head's time
	loop    *sched.Loop             // nil until the first delayed value
	values  int                     // values in lines
	stopped bool                    // Drain or Close took the lines
}

// line is the values of a key from its first value not due yet on.
type line[K comparable, V any] struct {
	key  K
	vals []V
	due  []int64 // when each value is due, Unix nanoseconds (0: when put)
}

// PutAfter implements engine.Engine: v waits in its key's line until d
// passed on the engine's clock, with the key's values put after it.
func (e *Engine[K, V]) PutAfter(_ context.Context, key K, v V, d time.Duration) error {
	if e.d != nil {
		return engine.ErrDelayDebounced
	}
	if e.draining.Load() {
		return engine.ErrClosed
	}
	if !e.reserve() {
		return store.ErrFull
	}
	if !e.delay(key, v, timing.AddNanos(e.clk.Now().UnixNano(), d)) {
		e.release(1)
		return engine.ErrClosed
	}
	return nil
}

// PutTxAfter implements engine.Engine: the process has no database.
func (e *Engine[K, V]) PutTxAfter(context.Context, any, K, V, time.Duration) error {
	return engine.ErrNoTx
}

// delay puts v in key's line, due at due (0: when put), opening the line
// if due is set; it reports false, and puts nothing, if key has no line
// and due is 0 (the value goes to the Groups), or once the lines stopped.
func (e *Engine[K, V]) delay(key K, v V, due int64) bool {
	ds := &e.delays
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.stopped {
		return false
	}
	l := ds.lines[key]
	if l == nil {
		if due == 0 {
			return false
		}
		if ds.lines == nil {
			ds.lines = make(map[K]*line[K, V])
		}
		l = &line[K, V]{key: key}
		ds.lines[key] = l
		ds.count.Add(1)
		if ds.heap.Push(l, due) {
			e.wakeDelays()
		}
	}
	l.vals = append(l.vals, v)
	l.due = append(l.due, due)
	ds.values++
	return true
}

// wakeDelays starts the loop of the lines, or wakes it: a line's head is
// due sooner than the loop sleeps for. ds.mu is held.
func (e *Engine[K, V]) wakeDelays() {
	ds := &e.delays
	if ds.loop == nil {
		ds.loop = sched.Start(e.clk, e.moveDue)
		return
	}
	ds.loop.Wake()
}

// putOrDelay puts v in the Groups, or in its key's line if it has one.
func (e *Engine[K, V]) putOrDelay(key K, v V) error {
	if e.delays.count.Load() > 0 && e.delay(key, v, 0) {
		return nil
	}
	return e.g.Put(key, v)
}

// moveDue moves into the Groups the values due by now from the head of
// every line whose head is due, and returns when the next line's head is.
// It runs on the loop's goroutine.
func (e *Engine[K, V]) moveDue(now time.Time) (time.Time, bool) {
	ds := &e.delays
	ds.mu.Lock()
	defer ds.mu.Unlock()
	t := now.UnixNano()
	for {
		l, at, ok := ds.heap.Peek()
		if !ok {
			return time.Time{}, false
		}
		if at > t {
			return time.Unix(0, at), true
		}
		ds.heap.Pop()
		n := 0
		for n < len(l.vals) && l.due[n] <= t {
			n++
		}
		// Into the Groups under ds.mu, so that a Put to the key waits for
		// them and goes behind.
		if err := e.g.Put(l.key, l.vals[:n]...); err != nil {
			// The Groups closed: Close takes what the lines hold.
			ds.heap.Push(l, at)
			return time.Time{}, false
		}
		ds.values -= n
		if n == len(l.vals) {
			delete(ds.lines, l.key)
			ds.count.Add(-1)
			continue
		}
		clear(l.vals[:n])
		l.vals, l.due = l.vals[n:], l.due[n:]
		ds.heap.Push(l, l.due[0])
	}
}

// lineOf returns how many values of key wait in its line, and when the
// first is due; ok is false if key has no line.
func (e *Engine[K, V]) lineOf(key K) (n int, due time.Time, ok bool) {
	if e.delays.count.Load() == 0 {
		return 0, time.Time{}, false
	}
	e.delays.mu.Lock()
	defer e.delays.mu.Unlock()
	l := e.delays.lines[key]
	if l == nil {
		return 0, time.Time{}, false
	}
	return len(l.vals), time.Unix(0, l.due[0]), true
}

// delayed returns the values waiting in lines.
func (e *Engine[K, V]) delayed() int {
	e.delays.mu.Lock()
	defer e.delays.mu.Unlock()
	return e.delays.values
}

// stopDelays stops the loop and returns what the lines still hold, for
// the caller to hand to Config.Left: a delayed value is not handled before
// its time, and a stopping engine does not wait for it. Later calls return
// nothing.
func (e *Engine[K, V]) stopDelays() map[K]*line[K, V] {
	ds := &e.delays
	ds.mu.Lock()
	ds.stopped = true
	loop, lines := ds.loop, ds.lines
	ds.lines, ds.heap, ds.values = nil, sched.Heap[*line[K, V]]{}, 0
	ds.count.Store(0)
	ds.mu.Unlock()
	if loop != nil {
		loop.Stop()
	}
	return lines
}

// leftDelayed hands the values of lines to Config.Left, a key at a time.
func (e *Engine[K, V]) leftDelayed(lines map[K]*line[K, V]) {
	for key, l := range lines {
		e.left(key, l.vals)
	}
}
