package store

import (
	"bytes"
	"math"

	"github.com/pacerkit/pacer/internal/timing"
)

// key is Memory's state of one key that has values or a lease. Its values
// run, head first: the runs (the batches out on a lease or kept to be
// leased again as they are, in the order of their values), the free
// values behind them, and the open burst (burst values at the tail).
type key struct {
	name string
	vals []value
	runs []run
	// leased counts the runs out on a lease; limit is the
	// ClaimParams.PerKey of the claim that leased the key last (1 at
	// least): the key takes no new lease while leased reaches it.
	leased, limit int
	// held is set by a Hold until Release, since heldSince.
	held      bool
	heldSince int64
	// burst counts the values of the open burst, which is ready from due
	// on; first is when its first value came. freeAt is when the free
	// values outside the burst became ready.
	burst              int
	first, due, freeAt int64
	// gate is the latest time a value of the key is due at (AddParams.Delay),
	// 0 if none was delayed: from then on no value of the key waits for its
	// time, and a lease need not look for one.
	gate int64
	// elig reports that the key may take a lease (see eligible), as of
	// its last change; place is when it last became so, or was last
	// leased: a key is ready at the later of place and when its next
	// batch is, so that a key that just got a lease goes behind the keys
	// already waiting.
	elig  bool
	place int64
	// at is the instant of the key's entry in the schedule: the earlier
	// of when it is ready and when its first lease lapses. A paused key
	// keeps it without an entry.
	at    int64
	fence uint64 // the last lease's
	// order is when, among the schedulings of the queue, the key's live
	// entry in the schedule was pushed: the entry of that order is the
	// live one (every other entry of the key is stale), and the order
	// breaks a tie between keys ready at the same instant, as the
	// schedule does (see KeyInfo.Ahead). 0 while the key has no live
	// entry: before its first scheduling, once Claim popped it, after
	// unschedule, and while the key is paused.
	order uint64
	// tenant is the tenant of the Add that gave the key its first value;
	// nil for none.
	tenant *tenant
	// seq is when, among the keys the queue created, the key's record was
	// created: its place in the pages of Keys (see keyOrder).
	seq uint64
	// maxWait reports that the open burst's due is its max-wait deadline,
	// for an operator.
	maxWait bool
	// tat is the key's theoretical arrival time under ClaimParams.KeyRate
	// (0: none); tokenAt is when a Claim that found no token deferred the
	// key to: it is not ready before then (see memory_keyrate.go).
	tat, tokenAt int64
}

// run is a batch of a key that was leased: out on its lease, or kept
// after a lapse, a Retry, a Defer or a Hold, to be leased again with the
// same values.
type run struct {
	n       int  // its values: the n after those of the runs before it
	attempt int  // the Attempt of its last lease; 0 once Release started its attempts over
	bump    bool // its next lease counts an attempt: after a Retry, a lapse or a Release
	out     bool // out on a lease
	retry   bool // kept after a Retry, not a Defer or a lapse
	fence   uint64
	at      int64  // out: when its lease lapses; kept: when it is ready again
	since   int64  // out: when its lease began
	holder  string // out: its lease's ClaimParams.Holder
	err     string // the Outcome.Err of its last Retry or Hold
}

// value is a stored value, when it was added, and when it is due if that
// is later (AddParams.Delay; 0 otherwise).
type value struct {
	b   []byte
	at  int64
	due int64
}

// settle closes the open burst once its deadline has passed, and takes
// back the runs whose lease lapsed by now.
func (k *key) settle(now int64) {
	if k.burst > 0 && k.due <= now {
		if k.free() == k.burst {
			k.freeAt = k.due // the burst's values are the first free ones ready
		}
		k.burst = 0
	}
	if k.leased == 0 {
		return
	}
	first := int64(math.MaxInt64)
	for i := range k.runs {
		r := &k.runs[i]
		if r.out && r.at <= now {
			r.out, r.bump, r.retry = false, true, false // a lapse is the batch's next attempt
			k.leased--
			first = min(first, r.at)
		}
	}
	if first != math.MaxInt64 {
		k.track(first) // a key that may lease again did so from the lapse on
	}
}

// inRuns returns how many values the runs hold.
func (k *key) inRuns() int {
	n := 0
	for _, r := range k.runs {
		n += r.n
	}
	return n
}

// free returns how many values follow the runs, the open burst included.
func (k *key) free() int { return len(k.vals) - k.inRuns() }

// ready returns how many free values are outside the open burst.
func (k *key) ready() int { return k.free() - k.burst }

// kept returns the index of the first run that is not out: the batch the
// key's next lease takes again, before any free value; -1 if none.
func (k *key) kept() int {
	if len(k.runs) == k.leased {
		return -1
	}
	for i, r := range k.runs {
		if !r.out {
			return i
		}
	}
	return -1
}

// eligible reports whether k may take a lease once its next batch is
// ready: it is not held, has fewer leases out than its limit, and holds
// values that are not out.
func (k *key) eligible() bool {
	return !k.held && k.leased < max(k.limit, 1) && len(k.vals) > k.outValues()
}

// outValues returns how many values are out on a lease.
func (k *key) outValues() int {
	if k.leased == 0 {
		return 0
	}
	n := 0
	for _, r := range k.runs {
		if r.out {
			n += r.n
		}
	}
	return n
}

// next returns when the key's next batch is ready: its first kept run's
// instant, else when its free values became ready and the first of them
// is due, else its burst's due.
func (k *key) next() int64 {
	if i := k.kept(); i >= 0 {
		return k.runs[i].at
	}
	if k.ready() > 0 {
		return max(k.freeAt, k.vals[k.inRuns()].due)
	}
	return k.due
}

// dueOf returns how many of the n values of k from off on are due at now:
// those before the first that waits for its time. It looks at them only
// while a value of k may wait.
func (k *key) dueOf(off, n int, now int64) int {
	if k.gate <= now {
		k.gate = 0
		return n
	}
	for i, v := range k.vals[off : off+n] {
		if v.due > now {
			return i
		}
	}
	return n
}

// readyAt returns when an eligible k is ready for a lease.
func (k *key) readyAt() int64 { return max(k.place, k.next(), k.tokenAt) }

// isReady reports whether k may be leased at now.
func (k *key) isReady(now int64) bool { return k.elig && k.readyAt() <= now }

// track notes, at now, whether k may lease: a key that becomes eligible
// takes its place in the ready order then.
func (k *key) track(now int64) {
	e := k.eligible()
	if e && !k.elig {
		k.place = now
	}
	k.elig = e
}

// when returns the instant of k's schedule entry: the earlier of when it
// is ready, if eligible, and when its first lease lapses; ok is false for
// a key
// that waits for nothing the schedule times (held, or nothing to lease
// and no lease out).
func (k *key) when() (at int64, ok bool) {
	if k.held {
		return 0, false
	}
	at = math.MaxInt64
	if k.elig {
		at, ok = k.readyAt(), true
	}
	if k.leased > 0 {
		for _, r := range k.runs {
			if r.out && r.at < at {
				at, ok = r.at, true
			}
		}
	}
	return at, ok
}

// resched tracks k's eligibility at now and moves its schedule entry to
// where it now belongs; an entry already there keeps its place.
func (k *key) resched(q *queue, now int64) { k.reschedule(q, now, false) }

// reschedule is resched, and with force moves the entry to the tail of
// its instant even where it stands: a Finish, an Extend and a RetryNow
// place the key anew.
func (k *key) reschedule(q *queue, now int64, force bool) {
	k.track(now)
	at, ok := k.when()
	switch {
	case !ok:
		q.unschedule(k)
	case force || k.order == 0 || at != k.at:
		q.schedule(k, at)
	}
}

// add appends vals as Add does, and reschedules the key if that changed
// when it is ready.
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
	if !wasReady && k.ready() > 0 {
		k.freeAt = now
	}
	k.resched(q, now)
}

// schedule makes at the instant of k's schedule entry, and leaves its
// former entry stale. A paused key keeps the instant without an entry:
// ResumeKey schedules it from there.
func (q *queue) schedule(k *key, at int64) {
	k.at = at
	if q.keyPaused(k.name) {
		k.order = 0
		return
	}
	q.orders++
	k.order = q.orders
	q.sched.Push(slot{k, k.order}, at)
}

// unschedule takes k out of the schedule.
func (q *queue) unschedule(k *key) { k.order = 0 }

// forget removes k, which has no values and no lease.
func (q *queue) forget(k *key, now int64) {
	q.keepTAT(k, now)
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

// release ends k's hold: the attempts of its kept runs start over, and
// the kept runs behind its last lease out give up their size, so that
// the next lease takes their values and the free ones behind, up to
// MaxBatch (with no lease out, as a key with one lease at a time does).
// The runs it keeps are ready at once.
func (k *key) release(now int64) {
	k.held = false
	last := -1
	for i, r := range k.runs {
		if r.out {
			last = i
		}
	}
	if len(k.runs) > last+1 {
		if k.ready() == 0 {
			k.freeAt = now
		}
		k.runs = k.runs[:last+1]
	}
	for i := range k.runs {
		if r := &k.runs[i]; !r.out {
			r.attempt, r.bump, r.retry, r.err, r.at = 0, true, false, "", now
		}
	}
}
