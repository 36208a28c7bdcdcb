package store

import (
	"container/heap"

	"github.com/pacerkit/pacer/internal/sched"
)

var _ FairTenants = (*Memory)(nil)

// FairTenants implements FairTenants.
func (m *Memory) FairTenants() {}

// fair is the turn order across the tenants of a Memory queue, made by
// the first Add that names a tenant (a queue without tenants has none and
// claims from its schedule alone). Its Claims move the keys that came due
// from the queue's schedule to their tenants' ready heaps, in the
// schedule's order, then take turns: the tenant with the smallest virtual
// time among those with ready keys leases its oldest-ready key.
type fair struct {
	tenants map[string]*tenant
	turns   turns   // the tenants with ready keys, by (vtime, name)
	clock   float64 // the virtual time of the last tenant served
}

// tenant is a tenant's record; "" holds the keys without one. Records
// stay for the life of the queue, with their virtual time and weight.
type tenant struct {
	name   string
	weight int
	vtime  float64
	// ready holds the tenant's keys that came due, by when; an entry is
	// live while its order is its key's, as in the schedule, and the stale
	// ones are skipped.
	ready sched.Heap[slot]
	pos   int // index in fair.turns; -1 while the tenant has no turn
}

// tenant returns the record of name, creating it, and q's turn order, if
// need be.
func (q *queue) tenant(name string) *tenant {
	if q.fair == nil {
		q.fair = &fair{tenants: make(map[string]*tenant)}
	}
	t := q.fair.tenants[name]
	if t == nil {
		t = &tenant{name: name, weight: 1, pos: -1}
		q.fair.tenants[name] = t
	}
	return t
}

// tenantOf returns the tenant of k, which is "" for a key added without
// one.
func (q *queue) tenantOf(k *key) *tenant {
	if k.tenant != nil {
		return k.tenant
	}
	return q.tenant("")
}

// promote moves the keys of q that are due by now from the schedule to
// their tenants' ready heaps, in the schedule's order. A tenant that gets
// its first ready key takes its turn from the larger of its own virtual
// time and the queue's clock: idleness earns no credit.
func (q *queue) promote(now int64) {
	for {
		k, at, ok := q.top()
		if !ok || at > now {
			return
		}
		q.sched.Pop()
		t := q.tenantOf(k)
		if t.pos < 0 {
			t.vtime = max(t.vtime, q.fair.clock)
			heap.Push(&q.fair.turns, t)
		}
		t.ready.Push(slot{k, k.order}, at) // the entry moves, still live
	}
}

// peek returns the tenant whose turn it is and its oldest ready key,
// dropping stale entries, and the tenants left with none from the turns.
func (f *fair) peek() (*tenant, *key, bool) {
	for len(f.turns) > 0 {
		t := f.turns[0]
		for {
			s, _, ok := t.ready.Peek()
			if !ok {
				break
			}
			if s.live() {
				return t, s.k, true
			}
			t.ready.Pop()
		}
		heap.Pop(&f.turns)
	}
	return nil, nil, false
}

// took ends the turn of t, whose key at the front of its ready heap a
// Claim popped, and leased if leased: the queue's clock moves to t's
// virtual time, which advances by 1/weight.
func (f *fair) took(t *tenant, leased bool) {
	if leased {
		f.clock = t.vtime
		t.vtime += 1 / float64(t.weight)
	}
	if t.ready.Len() == 0 {
		heap.Remove(&f.turns, t.pos)
		return
	}
	heap.Fix(&f.turns, t.pos)
}

// claimFair leases up to p.Keys keys of q, which has tenants, in turns.
// A key popped that is not ready after all (its entry was a lapse, and it
// has no batch to lease), or has no token of its KeyRate, takes no turn; every key popped is scheduled
// again, as Claim does, and one that may lease again comes back through
// promote.
func (m *Memory) claimFair(queue string, q *queue, p ClaimParams, now int64) []Lease {
	var leases []Lease
	for len(leases) < p.Keys {
		q.promote(now)
		t, k, ok := q.fair.peek()
		if !ok {
			break
		}
		t.ready.Pop()
		k.order = 0 // its live entry is gone
		k.settle(now)
		ready := k.isReady(now) && (!p.KeyRate.On() || k.takeToken(p.KeyRate, now))
		q.fair.took(t, ready) // a key without a token takes no turn
		if ready {
			leases = append(leases, m.lease(queue, k, p, now))
		}
		k.resched(q, now)
	}
	return leases
}

// aheadFair is ahead for q, which has tenants: the keys of k's tenant
// alone, those its ready heap holds and those still in the schedule,
// whose entries come before k's. The walk of the schedule passes over
// the entries of other tenants before k's as well: O(MaxAhead) plus
// those.
func (q *queue) aheadFair(k *key, now int64) int {
	t, n := q.tenantOf(k), 0
	t.ready.Walk(q.countAhead(k, now, t, &n))
	q.sched.Walk(q.countAhead(k, now, t, &n))
	return n
}

// turns is a heap of tenants by (vtime, name).
type turns []*tenant

func (h turns) Len() int { return len(h) }
func (h turns) Less(i, j int) bool {
	if h[i].vtime != h[j].vtime {
		return h[i].vtime < h[j].vtime
	}
	return h[i].name < h[j].name
}
func (h turns) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].pos, h[j].pos = i, j
}
func (h *turns) Push(x any) {
	t := x.(*tenant)
	t.pos = len(*h)
	*h = append(*h, t)
}
func (h *turns) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.pos = -1
	return t
}

// tenantsAhead is KeyInfo.TenantsAhead of k, a key of q which is ready
// and not paused: 0 without tenants. It first moves the keys that came
// due into their tenants' ready heaps, as a Claim would at now, which
// changes no turn and no order (a Claim does the same before it leases),
// so that every tenant with a ready key has its place in the turns. It
// then walks the heap of turns from its root, down to the tenants before
// k's only, no tenant coming before its parent, and counts those with a
// key ready at now whose entry is live (a paused key has none): O(1) per
// tenant before k's, up to MaxAhead, plus the stale entries and the keys
// not ready after all (a lapse with nothing to lease) that the count
// passes over in their ready heaps, which Claims pass over too.
func (q *queue) tenantsAhead(k *key, now int64) int {
	if q.fair == nil {
		return 0
	}
	q.promote(now)
	own := q.tenantOf(k)
	if own.pos < 0 {
		return 0 // cannot be: k is ready, so its tenant has a turn
	}
	turns, n := q.fair.turns, 0
	var walk func(i int)
	walk = func(i int) {
		if i >= len(turns) || n >= MaxAhead || !turns.Less(i, own.pos) {
			return // neither this tenant nor any below it comes before k's
		}
		if turns[i].hasReady(now) {
			n++
		}
		walk(2*i + 1)
		walk(2*i + 2)
	}
	walk(0)
	return n
}

// hasReady reports whether t has a key ready at now in its ready heap,
// under a live entry.
func (t *tenant) hasReady(now int64) bool {
	found := false
	t.ready.Walk(func(s slot, _ int64) bool {
		if found {
			return false
		}
		if o := s.k; s.live() {
			o.settle(now)
			found = o.isReady(now)
		}
		return !found
	})
	return found
}
