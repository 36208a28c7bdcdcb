package fifo

import (
	"fmt"
	"time"
)

// With GroupsConfig.PerKey > 1 a key may have several leases out, so its
// record keeps its batches as runs instead of one head: the runs cover
// its first messages, in order, each out on a lease or kept (after a
// Retry, a Defer or a Hold) to be leased again as it is; the messages
// behind them are free, never leased yet. The key's state then says
// where its next lease stands:
//
//   - stateReady: in the ready order (a live entry; entries it left
//     behind when it left the order are skipped, counted by skip);
//   - stateDelayed: its first kept run waits for its delay;
//   - stateHeld: held until Release;
//   - stateLeased: none of these: its leases fill PerKey, or it has
//     nothing to lease besides its leases out.
//
// Every path here costs O(PerKey) in the runs of the key, plus a copy of
// the key's messages behind a run acked or dropped out of order.

// run is a batch of a key that was leased (PerKey > 1).
type run struct {
	n       int    // its messages: the n after those of the runs before it
	attempt int    // the Attempt of its current lease, or of its next
	token   uint64 // its current lease's, while out
	due     int64  // kept: when its delay ends, on the delayer's scale; 0 if ready
	out     bool   // out on a lease
	retry   bool   // kept after a Retry, not a Defer or a Hold
}

// offset returns the index in gr.msgs of the first message of run i.
func (gr *group[M]) offset(i int) int {
	n := 0
	for _, r := range gr.runs[:i] {
		n += r.n
	}
	return n
}

// free returns how many messages follow the runs.
func (gr *group[M]) free() int { return len(gr.msgs) - gr.offset(len(gr.runs)) }

// kept returns the index of the first run not out, which the key's next
// lease takes again before any free message; -1 if none.
func (gr *group[M]) kept() int {
	if len(gr.runs) == gr.leased {
		return -1
	}
	for i, r := range gr.runs {
		if !r.out {
			return i
		}
	}
	return -1
}

// leaseRun leases key's next batch: its first kept run, else up to
// MaxBatch free messages as a new run. A key left with room for another
// lease, and something to lease, goes to the tail of the ready order.
func (g *Groups[K, M]) leaseRun(key K, gr *group[M]) Lease[K, M] {
	i := gr.kept()
	if i < 0 {
		n := gr.free()
		if g.maxBatch > 0 && n > g.maxBatch {
			n = g.maxBatch
		}
		gr.runs = append(gr.runs, run{n: n, attempt: 1})
		i = len(gr.runs) - 1
	}
	start := gr.offset(i)
	r := &gr.runs[i]
	g.token++
	r.out, r.token, r.due, r.retry = true, g.token, 0, false
	gr.leased++
	g.leases++
	g.waiting -= r.n
	gr.state = stateLeased
	l := Lease[K, M]{Key: key, Messages: gr.msgs[start : start+r.n : start+r.n], Attempt: r.attempt, gr: gr, token: r.token}
	g.reconsider(key, gr)
	return l
}

// reconsider places a key in stateLeased whose runs or messages changed:
// in the ready order if it may take a lease and has a batch ready, in the
// delays if its first kept run waits for its delay. A key left with
// nothing is forgotten.
func (g *Groups[K, M]) reconsider(key K, gr *group[M]) {
	if gr.leased == 0 && len(gr.msgs) == 0 {
		g.forget(key, gr)
		return
	}
	if gr.leased >= g.perKey || g.closed {
		return
	}
	if i := gr.kept(); i >= 0 {
		r := &gr.runs[i]
		if r.due != 0 && r.due > g.delay.ns.Now() {
			gr.state, gr.due = stateDelayed, r.due
			g.delayed++
			if r.retry {
				gr.retry = true
				g.retrying++
				g.behind += gr.free()
			}
			g.delay.push(key, gr.due, g.fire)
			return
		}
		r.due = 0
		g.makeReady(key, gr)
		return
	}
	if gr.free() > 0 {
		g.makeReady(key, gr)
	}
}

// unplace takes a key out of the ready order or the delays, into
// stateLeased; its entry in either is left behind, stale.
func (g *Groups[K, M]) unplace(gr *group[M]) {
	switch gr.state {
	case stateReady:
		gr.skip++
		g.stale++
	case stateDelayed:
		g.delayed--
		if gr.retry {
			gr.retry = false
			g.retrying--
			g.behind -= gr.free()
		}
	}
	gr.state = stateLeased
}

// runDue readies a key whose first kept run's delay passed, if it has
// room for a lease; it runs in fire.
func (g *Groups[K, M]) runDue(key K, gr *group[M]) {
	g.unplace(gr)
	if i := gr.kept(); i >= 0 {
		gr.runs[i].due = 0
	}
	g.reconsider(key, gr)
}

// endRun checks that l is a lease out of key in this Groups and ends it,
// returning the key's record and the index of the lease's run; it panics,
// with the lock released, as end does.
func (g *Groups[K, M]) endRun(l leaseID[K, M], op string) (*group[M], int) {
	gr := g.groups[l.key]
	if gr != nil && gr == l.gr {
		for i := range gr.runs {
			if r := &gr.runs[i]; r.out && r.token == l.token {
				r.out = false
				gr.leased--
				g.leases--
				return gr, i
			}
		}
	}
	g.mu.Unlock()
	panic(fmt.Sprintf("fifo: Groups.%s of a lease that is not current (already ended, or not handed out by this Groups)", op))
}

// cut removes run i and its messages from gr and returns them. The
// messages of leases still out stay where they are: messages behind the
// run are copied to a new array rather than moved over it.
func (gr *group[M]) cut(i int) []M {
	start, n := gr.offset(i), gr.runs[i].n
	msgs := gr.msgs[start : start+n : start+n]
	if start == 0 {
		gr.msgs = gr.msgs[n:]
	} else {
		gr.msgs = append(gr.msgs[:start:start], gr.msgs[start+n:]...)
	}
	gr.runs = append(gr.runs[:i], gr.runs[i+1:]...)
	return msgs
}

// removeRun is remove with PerKey > 1: it removes the lease's batch
// alone and reports whether the key has messages left, out on its other
// leases included. The caller holds the lock; removeRun releases it.
func (g *Groups[K, M]) removeRun(l leaseID[K, M], op string) (more bool) {
	gr, i := g.endRun(l, op)
	n := len(gr.cut(i))
	g.stored -= n
	if gr.state == stateHeld {
		g.heldMsgs -= n
	} else {
		g.unplace(gr) // a lease ended: the key goes to the tail
		g.reconsider(l.key, gr)
	}
	more = len(gr.msgs) > 0
	g.checkDrained()
	g.mu.Unlock()
	return more
}

// againRun is again with PerKey > 1: the lease's run is kept in its place,
// ready after its delay. The caller holds the lock; againRun releases it.
func (g *Groups[K, M]) againRun(l leaseID[K, M], after time.Duration, op string, tries int) {
	gr, i := g.endRun(l, op)
	r := &gr.runs[i]
	r.attempt += tries
	r.retry = tries > 0
	r.due = 0
	if after > 0 {
		r.due = g.delay.deadline(after)
	}
	g.waiting += r.n
	if g.closed {
		g.handBackRun(l.key, gr, i)
		return
	}
	if gr.state != stateHeld {
		g.unplace(gr)
		g.reconsider(l.key, gr)
	}
	g.checkDrained()
	g.mu.Unlock()
}

// holdRun is Hold with PerKey > 1: the lease's run is kept in its place
// and the key is held. The caller holds the lock; holdRun releases it.
func (g *Groups[K, M]) holdRun(l leaseID[K, M]) {
	gr, i := g.endRun(l, "Hold")
	r := &gr.runs[i]
	r.due, r.retry = 0, false
	g.waiting += r.n
	if g.closed {
		g.handBackRun(l.key, gr, i)
		return
	}
	if gr.state != stateHeld {
		g.unplace(gr)
		gr.state = stateHeld
		g.held++
		g.heldMsgs += len(gr.msgs)
	}
	g.checkDrained()
	g.mu.Unlock()
}

// handBackRun, once Groups is closed, takes the messages of run i, whose
// lease just ended, releases the lock and hands them to Close's callback.
func (g *Groups[K, M]) handBackRun(key K, gr *group[M], i int) {
	msgs := gr.cut(i)
	g.waiting -= len(msgs)
	g.stored -= len(msgs)
	if gr.leased == 0 && len(gr.msgs) == 0 {
		g.forget(key, gr)
	}
	g.checkDrained()
	left := g.left
	g.mu.Unlock()
	g.giveBack(left, key, msgs)
}

// releaseRuns is Release with PerKey > 1 of a held key: its kept runs
// start their attempts over and are ready at once, and those behind its
// last lease out give up their size, so that its next lease takes their
// messages and the free ones behind, up to MaxBatch.
func (g *Groups[K, M]) releaseRuns(key K, gr *group[M]) {
	last := -1
	for i, r := range gr.runs {
		if r.out {
			last = i
		}
	}
	gr.runs = gr.runs[:last+1]
	for i := range gr.runs {
		if r := &gr.runs[i]; !r.out {
			r.attempt, r.due, r.retry = 1, 0, false
		}
	}
	g.held--
	g.heldMsgs -= len(gr.msgs)
	gr.state = stateLeased
	g.reconsider(key, gr)
}

// takeRuns, for Close, takes from key every message not out on a lease,
// in order, and forgets the key if it has no lease out; the caller resets
// the counts of delayed and held keys.
func (g *Groups[K, M]) takeRuns(key K, gr *group[M]) []M {
	var taken, outs []M
	var runs []run
	off := 0
	for _, r := range gr.runs {
		if r.out {
			outs = append(outs, gr.msgs[off:off+r.n]...)
			runs = append(runs, r)
		} else {
			taken = append(taken, gr.msgs[off:off+r.n]...)
		}
		off += r.n
	}
	taken = append(taken, gr.msgs[off:]...)
	gr.msgs, gr.runs = outs, runs
	gr.state, gr.retry, gr.skip = stateLeased, false, 0
	g.waiting -= len(taken)
	g.stored -= len(taken)
	if gr.leased == 0 {
		g.forget(key, gr)
	}
	return taken
}
