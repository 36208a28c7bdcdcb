package debounce

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/pacerkit/pacer/internal/sched"
	"github.com/pacerkit/pacer/internal/timing"
)

// ErrClosed is returned by Add after Shutdown or Close.
var ErrClosed = errors.New("debounce: closed")

// A Keyed debouncer collects values per key into bursts and hands each burst
// to a fire function once the key has been quiet for Config.Wait, or the
// quiet period of the AddWait that opened the burst (bounded by
// Config.MaxWait, Config.MaxItems and Config.Leading).
//
// All keys share one goroutine and one timer, on which fire runs; a panic
// in fire crashes the program. A key's state exists only while it has an
// open burst (with Leading, until the key is quiet). Its methods are safe
// for concurrent use. The zero value is not usable: create it with New,
// and stop it with Shutdown or Close.
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
	peak     int                   // largest len(entries) since the map was last made
	fifo     keyQueue[K]           // first deadlines of new entries, in order
	fifoLast int64                 // deadline of the last key pushed to fifo
	heap     sched.Heap[ref[K, V]] // later deadlines, lazily updated
	ext      map[K]ext             // of the entries with hasExt
	ready    []due[K, V]           // handed over, waiting for the loop
	seq      uint64                // scheduling order, for ties between equal deadlines
	open     int                   // keys with an open burst
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

// Add appends v to key's burst, opening one if the key has none, and moves
// the burst's deadline to now+Wait, but never past its first Add plus
// MaxWait. With MaxItems, a burst that becomes full fires at once. With
// Leading, the value that opens a burst on a quiet key (no Add for Wait)
// fires at once as a burst of one. A burst whose deadline has passed is
// over even if fire has not run yet, so a late Add opens a new burst. Add
// never blocks on fire. It returns ErrClosed after Shutdown or Close.
//
// Wait is the quiet period of the bursts Add opens; AddWait opens them
// with another.
func (k *Keyed[K, V]) Add(key K, v V) error { return k.add(key, v, k.wait) }

// AddWait is Add for a burst with a quiet period of its own: if v opens a
// burst, the burst waits wait instead of Config.Wait, after each of its
// Adds, whichever method makes them; if key already has an open burst, v
// joins it and wait does not apply. MaxWait still bounds the burst, and a
// wait longer than MaxWait is cut to it; math.MaxInt64 means forever. With
// Leading, whether the key is quiet depends on the quiet period of its last
// burst. It returns an error if wait is not positive, and ErrClosed after
// Shutdown or Close.
func (k *Keyed[K, V]) AddWait(key K, v V, wait time.Duration) error {
	if wait <= 0 {
		return fmt.Errorf("debounce: AddWait wait must be > 0, got %v", wait)
	}
	if k.maxWait > 0 {
		wait = min(wait, k.maxWait)
	}
	return k.add(key, v, wait)
}

// add is Add with quiet period w for a burst that v opens.
func (k *Keyed[K, V]) add(key K, v V, w time.Duration) error {
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
		e, woke = k.openBurst(key, e, now, w)
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
// burst with values to fire; a burst whose only value already fired at the
// leading edge ends without firing again. fire runs on the debouncer's
// goroutine, so it may not have run yet when Flush returns; it runs after
// every burst whose deadline has passed, and Close does not discard it. A
// burst whose deadline has passed is over even if fire has not run yet:
// Flush leaves it to fire in its place and reports false. Flush does not
// make the key quiet: with Leading, an Add within the quiet period opens a
// burst that does not lead.
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
