package fifo

import (
	"container/heap"
	"fmt"
)

// Tenants shares the turns of a Groups across tenants (see
// NewFairGroups).
type Tenants[K comparable] struct {
	// Of maps a key to its tenant. It is read when the key gets its
	// first message, outside the Groups' lock. It is required.
	Of func(key K) string
	// Weight, when set, is a tenant's weight, read at every Put, outside
	// the Groups' lock; it counts from the tenant's next turn. A weight
	// below 1 counts as 1. nil weighs every tenant 1.
	Weight func(tenant string) int
}

// NewFairGroups returns an empty Groups whose keys are served in turns
// across tenants, each tenant getting turns in proportion to its weight,
// and first-come-first-served within a tenant, as NewGroups' are. Get
// takes the tenant with the smallest virtual time among those with a
// ready key (ties to the smaller name) and advances it by 1/weight; a
// tenant that had no ready key starts from the larger of its own virtual
// time and that of the last tenant served, so that idleness earns no
// credit. Choosing costs O(log T) in the T tenants with ready keys. Each
// tenant seen is remembered, with its virtual time and weight, for the
// life of the Groups. With GroupsConfig.PerKey > 1, each lease of a key
// takes a turn of its tenant, and a key that may lease again goes back to
// the tail of its tenant's keys. Every other guarantee of Groups holds as
// it is.
func NewFairGroups[K comparable, M any](cfg GroupsConfig, t Tenants[K]) (*Groups[K, M], error) {
	if t.Of == nil {
		return nil, fmt.Errorf("fifo: Tenants.Of is required")
	}
	g, err := NewGroups[K, M](cfg)
	if err != nil {
		return nil, err
	}
	g.tenantOf, g.weightOf = t.Of, t.Weight
	g.fair = &fairReady[K, M]{tenants: make(map[string]*tenant[K, M])}
	return g, nil
}

// fairReady is the ready order of a Groups with tenants
// (GroupsConfig.Tenant): each tenant has its keys in a FIFO, and Get
// serves the tenant with the smallest virtual time among those with a
// ready key, advancing it by 1/weight. The clock is the virtual time of
// the last tenant served; a tenant whose FIFO was empty starts from the
// larger of its own virtual time and the clock, so that idleness earns no
// credit. Push and pop cost O(log T) in the T tenants with ready keys.
type fairReady[K comparable, M any] struct {
	tenants map[string]*tenant[K, M]
	turns   tenantHeap[K, M]
	clock   float64
	n       int // ready keys, all tenants together
}

// tenant is a tenant's record: kept for the life of the Groups, with its
// virtual time and weight.
type tenant[K comparable, M any] struct {
	name   string
	weight int
	vtime  float64
	ready  ring[readyKey[K, M]]
	pos    int // index in turns; -1 while the tenant has no ready key
}

// tenant returns the record of name, with weight w when w > 0.
func (f *fairReady[K, M]) tenant(name string, w int) *tenant[K, M] {
	t := f.tenants[name]
	if t == nil {
		t = &tenant[K, M]{name: name, weight: 1, pos: -1}
		f.tenants[name] = t
	}
	if w > 0 {
		t.weight = w
	}
	return t
}

func (f *fairReady[K, M]) push(t *tenant[K, M], r readyKey[K, M]) {
	if t.pos < 0 {
		t.vtime = max(t.vtime, f.clock)
		heap.Push(&f.turns, t)
	}
	t.ready.push(r)
	f.n++
}

// pop takes the front key of the tenant whose turn it is, and advances
// that tenant's virtual time. Entries that stale reports are dropped on
// the way, without a turn: a key that left the ready order (PerKey > 1)
// costs its tenant nothing.
func (f *fairReady[K, M]) pop(stale func(readyKey[K, M]) bool) (readyKey[K, M], bool) {
	for len(f.turns) > 0 {
		t := f.turns[0]
		r, _ := t.ready.pop()
		f.n--
		live := !stale(r)
		if live {
			f.clock = t.vtime
			t.vtime += 1 / float64(t.weight)
		}
		if t.ready.len() == 0 {
			heap.Pop(&f.turns)
		} else if live {
			heap.Fix(&f.turns, 0)
		}
		if live {
			return r, true
		}
	}
	return readyKey[K, M]{}, false
}

// tenantHeap orders tenants by (vtime, name).
type tenantHeap[K comparable, M any] []*tenant[K, M]

func (h tenantHeap[K, M]) Len() int { return len(h) }
func (h tenantHeap[K, M]) Less(i, j int) bool {
	if h[i].vtime != h[j].vtime {
		return h[i].vtime < h[j].vtime
	}
	return h[i].name < h[j].name
}
func (h tenantHeap[K, M]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].pos, h[j].pos = i, j
}
func (h *tenantHeap[K, M]) Push(x any) {
	t := x.(*tenant[K, M])
	t.pos = len(*h)
	*h = append(*h, t)
}
func (h *tenantHeap[K, M]) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.pos = -1
	return t
}

// pushReady puts key at the tail of the ready order: of its tenant's, with
// tenants.
func (g *Groups[K, M]) pushReady(key K, gr *group[M]) {
	if g.fair == nil {
		g.ready.push(readyKey[K, M]{key, gr})
		return
	}
	t := g.fair.tenant(gr.tenant, 0)
	g.fair.push(t, readyKey[K, M]{key, gr})
}

// popReady takes the key whose turn it is, dropping the stale entries
// of keys that left the ready order (PerKey > 1) on the way.
func (g *Groups[K, M]) popReady() (readyKey[K, M], bool) {
	if g.fair != nil {
		return g.fair.pop(g.dropStale)
	}
	for {
		r, ok := g.ready.pop()
		if !ok || !g.dropStale(r) {
			return r, ok
		}
	}
}

// dropStale reports whether r is a stale entry of its key, which left the
// ready order since r was pushed, and counts it gone if so.
func (g *Groups[K, M]) dropStale(r readyKey[K, M]) bool {
	if r.gr.skip == 0 {
		return false
	}
	r.gr.skip--
	g.stale--
	return true
}

// readyOf returns the ready order that holds gr's entries: its tenant's,
// with tenants.
func (g *Groups[K, M]) readyOf(gr *group[M]) *ring[readyKey[K, M]] {
	if g.fair == nil {
		return &g.ready
	}
	return &g.fair.tenant(gr.tenant, 0).ready
}

// readyLen counts the entries of the ready order, stale ones included.
func (g *Groups[K, M]) readyLen() int {
	if g.fair == nil {
		return g.ready.len()
	}
	return g.fair.n
}

// tenantsAhead returns how many tenants with a ready key come before the
// tenant of gr, which is ready, in the turns, up to most; 0 without
// tenants. It walks the heap of turns from its root down to the tenants
// before gr's only, no tenant coming before its parent: O(1) per tenant
// counted. A tenant in the turns has entries in its FIFO; only with
// PerKey > 1 may they all be stale, which it looks for in each.
func (g *Groups[K, M]) tenantsAhead(gr *group[M], most int) int {
	if g.fair == nil {
		return 0
	}
	own := g.fair.tenants[gr.tenant]
	if own == nil || own.pos < 0 {
		return 0
	}
	turns, n := g.fair.turns, 0
	var walk func(i int)
	walk = func(i int) {
		if i >= len(turns) || n >= most || !turns.Less(i, own.pos) {
			return // neither this tenant nor any below it comes before gr's
		}
		if g.stale == 0 || hasLive(&turns[i].ready) {
			n++
		}
		walk(2*i + 1)
		walk(2*i + 2)
	}
	walk(0)
	return n
}

// hasLive reports whether r holds an entry that is not stale: as
// aheadRuns tells them, the first skip entries of a key being stale.
func hasLive[K comparable, M any](r *ring[readyKey[K, M]]) bool {
	seen := map[*group[M]]int{}
	for i := range r.n {
		e := r.buf[(r.head+i)&(len(r.buf)-1)].gr
		if seen[e] < e.skip {
			seen[e]++
			continue
		}
		return true
	}
	return false
}
