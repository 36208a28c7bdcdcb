package store

import (
	"bytes"

	"github.com/pacerkit/pacer/internal/timing"
)

// phase is what a key of Memory is doing.
type phase uint8

const (
	idle   phase = iota // in the schedule: ready at key.at, or waiting for it
	leased              // out on a lease that lapses at key.at
	held                // out of the schedule until Release
)

// key is Memory's state of one key that has values or a lease. Its values
// run, head first: the head batch (batch values, when set), the ready
// values, and the open burst (burst values at the tail).
type key struct {
	name string
	vals []value
	// batch is the size of the head batch: the values out on the lease,
	// or kept after a lapse, Retry or Defer, which the next lease takes
	// again as they are; 0 lets the next lease take what MaxBatch allows.
	batch int
	// attempt is the Attempt of the head batch's lease: the current one
	// while leased, else the next one.
	attempt int
	// burst counts the values of the open burst, which is ready from due
	// on; first is when its first value came.
	burst      int
	first, due int64
	// gate is the latest time a value of the key is due at (AddParams.Delay),
	// 0 if none was delayed: from then on no value of the key waits for its
	// time, and a lease need not look for one.
	gate  int64
	phase phase
	at    int64  // idle: when the key is or was ready; leased: when the lease lapses
	fence uint64 // the current lease's, while leased
	retry bool   // idle after a Retry, not a Defer
	// order is when, among the schedulings of the queue, the key was
	// last scheduled: what breaks a tie between keys ready at the same
	// instant, as the schedule does (see KeyInfo.Ahead). The key's live
	// entry in the schedule is the one of that order; 0 before the first
	// scheduling and after unschedule.
	order uint64
	// seq is when, among the keys the queue created, the key's record was
	// created: its place in the pages of Keys (see keyOrder).
	seq uint64

	// What an operator sees (Inspector): maxWait reports that the open
	// burst's due is its max-wait deadline; since is when the current
	// lease began, or when the key was held; holder is the current
	// lease's ClaimParams.Holder; err is the head batch's last Retry's or
	// Hold's Outcome.Err.
	maxWait bool
	since   int64
	holder  string
	err     string
}

// value is a stored value, when it was added, and when it is due if that
// is later (AddParams.Delay; 0 otherwise).
type value struct {
	b   []byte
	at  int64
	due int64
}

// settle closes the open burst once its deadline has passed.
func (k *key) settle(now int64) {
	if k.burst > 0 && k.due <= now {
		k.burst = 0
	}
}

// ready returns how many values lead the key outside its open burst.
func (k *key) ready() int { return len(k.vals) - k.burst }

// add appends vals as Add does, and reschedules a key whose readiness
// depends on its burst alone.
func (k *key) add(q *queue, vals [][]byte, p AddParams, now int64) {
	k.settle(now)
	wasReady := k.ready() > 0
	var due int64
	if p.Delay > 0 {
		due = timing.AddNanos(now, p.Delay)
		k.gate = max(k.gate, due)
	}
	for _, v := range vals {
		k.vals = append(k.vals, value{b: bytes.Clone(v), at: now, due: due})
	}
	if p.Wait == 0 {
		k.burst = 0 // the open burst, if any, is ready with these values
	} else {
		if k.burst == 0 {
			k.first = now
		}
		k.burst += len(vals)
		k.due, k.maxWait = timing.AddNanos(now, p.Wait), false
		if p.MaxWait > 0 {
			if due := timing.AddNanos(k.first, p.MaxWait); due < k.due {
				k.due, k.maxWait = due, true
			}
		}
		k.settle(now)
	}
	// A leased or held key, a batch waiting for its delay, and a key that
	// was ready already, or waits for its first value's time, keep their
	// place: the new values wait behind.
	if k.phase != idle || k.batch > 0 || wasReady {
		return
	}
	if at := k.readyAt(now); k.order == 0 || k.at != at {
		q.schedule(k, at)
	}
}

// readyAt returns when k, idle and without a head batch, is ready: when its
// first value is due, or its burst if that is all it has.
func (k *key) readyAt(now int64) int64 {
	if k.ready() == 0 {
		return k.due
	}
	return max(now, k.vals[0].due)
}

// dueOf returns how many of k's first n values are due at now: those before
// the first that waits for its time. It looks at them only while a value
// of k may wait.
func (k *key) dueOf(n int, now int64) int {
	if k.gate <= now {
		k.gate = 0
		return n
	}
	for i, v := range k.vals[:n] {
		if v.due > now {
			return i
		}
	}
	return n
}

// schedule makes at the instant when k is ready (or its lease lapses), and
// leaves its former entry stale. A paused key keeps the instant without an
// entry: ResumeKey schedules it from there.
func (q *queue) schedule(k *key, at int64) {
	k.at = at
	q.orders++
	k.order = q.orders
	if !q.keyPaused(k.name) {
		q.sched.Push(slot{k, k.order}, at)
	}
}

// unschedule takes k out of the schedule.
func (q *queue) unschedule(k *key) { k.order = 0 }

// forget removes k, which has no values and no lease.
func (q *queue) forget(k *key) {
	q.unschedule(k)
	delete(q.keys, k.name)
	q.created.remove(k)
	k.vals = nil // a stale schedule entry may keep k a while
}

// top returns the key that is ready first, and when, dropping the stale
// entries in front of it.
func (q *queue) top() (*key, int64, bool) {
	for {
		s, at, ok := q.sched.Peek()
		if !ok {
			return nil, 0, false
		}
		if s.live() {
			return s.k, at, true
		}
		q.sched.Pop()
	}
}
