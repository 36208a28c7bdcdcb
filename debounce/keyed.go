package debounce

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/pacerkit/pacer/internal/sched"
	"github.com/pacerkit/pacer/internal/timing"
)

// ErrClosed is returned by Add after Shutdown or Close.
var ErrClosed = errors.New("debounce: closed")

// A Keyed debouncer collects values per key into bursts and hands each burst
// to a fire function once the key has been quiet for Config.Wait (bounded by
// Config.MaxWait, Config.MaxItems and Config.Leading).
//
// All keys share one goroutine and one timer, on which fire runs; a panic
// in fire crashes the program. A key's state exists only while it has an
// open burst. Its methods are safe for concurrent use. The
// zero value is not usable: create it with New, and stop it with Shutdown
// or Close.
type Keyed[K comparable, V any] struct {
	wait     time.Duration
	maxWait  time.Duration // 0 for none
	maxItems int
	leading  bool
	clk      timing.Clock
	ns       timing.Nanos // the scale of all times below: immune to wall-clock steps
	fire     func(K, Burst[V])
	chunk    int // bursts taken per round of the loop, at least
	loop     *sched.Loop
	drained  chan struct{} // closed by the loop once the last fires are done

	mu       sync.Mutex
	entries  map[K]*entry[V]
	peak     int           // largest len(entries) since the map was last made
	fifo     keyQueue[K]   // first deadlines of new entries, in order
	fifoLast int64         // deadline of the last key pushed to fifo
	heap     sched.Heap[K] // later deadlines, lazily updated
	ready    []due[K, V]   // handed over, waiting for the loop
	seq      uint64        // scheduling order, for ties between equal deadlines
	open     int           // keys with an open burst
	closed   bool
	isDrain  bool // drained is closed

	batch []due[K, V] // reused by the loop goroutine only
}

// entry is the state of one key. Times are readings of k.ns (Unix
// nanoseconds); the deadline is derived from first and last rather than
// stored. Deadlines saturate at math.MaxInt64, the end of time, so that a
// Wait or MaxWait meaning "forever" never wraps into the past.
//
// Every entry has exactly one live schedule item: in fifo at first+Wait
// when it was created, or in the heap (inHeap set) once that item turned
// out stale and was pushed again at the real deadline. Items only ever come
// early, never late.
//
// An entry outlives its burst when the burst ends early (Flush, Cancel, a
// full MaxItems burst): it stays, with a zero seq, until its item comes due,
// so a key never has two live items. A burst that reopens it keeps the item
// if it is in the heap (it is no later than the new deadline); a fifo item,
// whose deadline is derived from first, is left behind as an orphan, which
// the loop skips, and the entry moves to the heap.
type entry[V any] struct {
	vals  []V
	first int64
	last  int64
	state uint64 // scheduling order of the open burst (0 when none is open) | inHeap
}

// inHeap marks an entry whose schedule item is in the heap.
const inHeap = 1 << 63

// seq returns the scheduling order of e's open burst, or 0 if none is open.
func (e *entry[V]) seq() uint64 { return e.state &^ inHeap }

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

// New returns a debouncer that calls fire with each key's burst, and starts
// its goroutine. It returns an error naming the field when cfg is invalid or
// fire is nil. Call Shutdown or Close to stop it.
//
// fire runs on the debouncer's goroutine, one call at a time; it must not
// block. A panic in fire is not recovered: like one in time.AfterFunc's f,
// it crashes the program.
func New[K comparable, V any](cfg Config, fire func(key K, b Burst[V])) (*Keyed[K, V], error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if fire == nil {
		return nil, errors.New("debounce: fire must not be nil")
	}
	k := &Keyed[K, V]{
		wait:     cfg.Wait,
		maxWait:  cfg.MaxWait,
		maxItems: cfg.MaxItems,
		leading:  cfg.Leading,
		clk:      timing.From(cfg.Clock),
		fire:     fire,
		drained:  make(chan struct{}),
		entries:  make(map[K]*entry[V]),
		fifoLast: math.MinInt64,
		chunk:    256,
	}
	k.ns = timing.NewNanos(k.clk)
	k.loop = sched.Start(k.clk, k.run)
	return k, nil
}

// Add appends v to key's burst, opening one if the key is quiet, and moves
// the burst's deadline to now+Wait, but never past its first Add plus
// MaxWait. With MaxItems, a burst that becomes full fires at once. With
// Leading, the value that opens a burst fires at once as a burst of one.
// A burst whose deadline has passed is over even if fire has not run yet,
// so a late Add opens a new burst. Add never blocks on fire. It returns
// ErrClosed after Shutdown or Close.
func (k *Keyed[K, V]) Add(key K, v V) error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return ErrClosed
	}
	now := k.nanos()
	wake := false
	e := k.entries[key]
	if e != nil && e.seq() != 0 && k.overdue(key, e, now) {
		wake = true // and open a new burst
	}
	switch {
	case e == nil:
		e = &entry[V]{}
		k.entries[key] = e
		k.peak = max(k.peak, len(k.entries))
		wake = k.schedule(key, e, timing.AddNanos(now, k.wait))
	case e.state == 0: // reopening an entry whose item is in fifo
		e.state = inHeap
		wake = k.heap.Push(key, timing.AddNanos(now, k.wait))
	}
	if e.seq() == 0 {
		k.seq++
		e.state |= k.seq
		e.first = now
		k.open++
		if k.leading {
			e.last = now
			k.ready = append(k.ready, due[K, V]{at: now, seq: k.seq, first: now, last: now,
				key: key, vals: []V{v}, count: 1})
			k.mu.Unlock()
			k.loop.Wake()
			return nil
		}
	}
	e.vals = append(e.vals, v)
	e.last = now
	if k.maxItems > 0 && len(e.vals) >= k.maxItems {
		k.seq++
		k.handOver(key, e, now, k.seq)
		wake = true
	}
	k.mu.Unlock()
	if wake {
		k.loop.Wake()
	}
	return nil
}

// Flush ends key's burst and fires it now. It reports whether there was a
// burst with values to fire; a Leading burst whose only value already fired
// ends without firing again. fire runs on the debouncer's goroutine, so it
// may not have run yet when Flush returns; it runs after every burst whose
// deadline has passed, and Close does not discard it. A burst
// whose deadline has passed is over even if fire has not run yet: Flush
// leaves it to fire in its place and reports false.
func (k *Keyed[K, V]) Flush(key K) bool {
	k.mu.Lock()
	e := k.entries[key]
	if e == nil || e.seq() == 0 {
		k.mu.Unlock()
		return false
	}
	now := k.nanos()
	if k.overdue(key, e, now) {
		k.mu.Unlock()
		k.loop.Wake()
		return false
	}
	fired := len(e.vals) > 0
	if fired {
		k.seq++
		k.handOver(key, e, now, k.seq)
	} else {
		k.end(e)
	}
	k.mu.Unlock()
	if fired {
		k.loop.Wake()
	}
	return fired
}

// Cancel discards key's burst without firing it. It reports whether the key
// had an open burst. A burst whose deadline has passed is over even if fire
// has not run yet: Cancel leaves it to fire and reports false.
func (k *Keyed[K, V]) Cancel(key K) bool {
	k.mu.Lock()
	e := k.entries[key]
	if e == nil || e.seq() == 0 {
		k.mu.Unlock()
		return false
	}
	if k.overdue(key, e, k.nanos()) {
		k.mu.Unlock()
		k.loop.Wake()
		return false
	}
	k.end(e)
	k.mu.Unlock()
	return true
}

// Pending returns the number of keys with an open burst. With Leading, that
// includes keys whose only value already fired but whose burst has not yet
// reached its deadline.
func (k *Keyed[K, V]) Pending() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.open
}

// nanos reads the clock on the debouncer's scale.
func (k *Keyed[K, V]) nanos() int64 { return k.ns.Now() }

// schedule gives a new entry its item at its first deadline: in fifo
// unless the clock went back, and reports whether the loop must be woken.
func (k *Keyed[K, V]) schedule(key K, e *entry[V], at int64) bool {
	if at >= k.fifoLast {
		k.fifo.push(key)
		k.fifoLast = at
		return k.fifo.len() == 1
	}
	e.state = inHeap
	return k.heap.Push(key, at)
}

// overdue hands e's open burst over at its own deadline if that is not
// after now, and reports whether it did: the burst is over even though the
// loop has not taken it yet.
func (k *Keyed[K, V]) overdue(key K, e *entry[V], now int64) bool {
	d := k.deadline(e)
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
	e.state &= inHeap
	k.open--
}
