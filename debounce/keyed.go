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
// Leading, the value that opens a burst on a quiet key (no Add for Wait)
// fires at once as a burst of one.
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
	if e == nil || e.seq() == 0 {
		var woke bool
		e, woke = k.openBurst(key, e, now)
		wake = wake || woke
		if e.state&led != 0 {
			k.ready = append(k.ready, due[K, V]{at: now, seq: e.seq(), first: now, last: now,
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

// Cancel discards key's burst without firing it and forgets the key's Adds,
// so that with Leading its next Add fires at once. It reports whether the
// key had an open burst. A burst whose deadline has passed is over even if
// fire has not run yet: Cancel leaves it to fire and reports false.
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
	e.state |= forgot
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

// openBurst opens a burst for key at now, on e, the key's entry if it has one,
// and reports whether the loop must be woken. With Leading, the burst leads
// (led) if the key is quiet.
func (k *Keyed[K, V]) openBurst(key K, e *entry[V], now int64) (*entry[V], bool) {
	lead := k.leading && (e == nil || k.quiet(e, now))
	first := timing.AddNanos(now, k.wait)
	wake := false
	switch {
	case e == nil:
		e = &entry[V]{}
		k.entries[key] = e
		k.peak = max(k.peak, len(k.entries))
		wake = k.schedule(key, e, first)
	case e.state&inHeap == 0:
		// The fifo item's deadline is derived from first, which changes:
		// leave it behind as an orphan, which the loop skips.
		e.state |= inHeap
		wake = k.heap.Push(key, first)
	}
	// An item already in the heap stays: it is due no later than first.
	k.seq++
	e.state = e.state&inHeap | k.seq
	if lead {
		e.state |= led
	}
	e.first, e.last = now, now
	k.open++
	return e, wake
}

// schedule gives a new entry its item at its first deadline: in fifo
// unless the clock went back, and reports whether the loop must be woken.
func (k *Keyed[K, V]) schedule(key K, e *entry[V], at int64) bool {
	if at >= k.fifoLast {
		k.fifo.push(key)
		k.fifoLast = at
		return k.fifo.len() == 1
	}
	e.state |= inHeap
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
