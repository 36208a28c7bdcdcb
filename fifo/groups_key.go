package fifo

import "time"

// KeyState is what a key of a Groups is doing, by its head batch.
type KeyState uint8

// The states of a key that has messages or a lease. A key is in exactly
// one.
const (
	// KeyReady: in the ready order, waiting for a Get.
	KeyReady KeyState = iota + 1
	// KeyLeased: out on a lease.
	KeyLeased
	// KeyRetrying: waiting for the delay of a Retry.
	KeyRetrying
	// KeyDeferred: waiting for the delay of a Defer.
	KeyDeferred
	// KeyHeld: held until Release.
	KeyHeld
)

// KeyInfo is what one key of a Groups is doing, read at one instant.
type KeyInfo struct {
	State KeyState
	// Messages counts the key's messages, those out on its lease
	// included.
	Messages int
	// Attempt is the Attempt of the key's lease (KeyLeased), or the one
	// its next lease will carry: after a Retry, one more than the lease
	// that failed.
	Attempt int
	// Due is when the delay of a KeyRetrying or KeyDeferred key ends, on
	// the Groups' clock; zero in the other states.
	Due time.Time
	// Ahead is, for a KeyReady key, the number of ready keys a Get would
	// lease before it, counted up to the bound given to Key; 0 otherwise.
	// With tenants (NewFairGroups), it counts the ready keys of the key's
	// own tenant before it: the other tenants' turns come in between.
	Ahead int
	// TenantsAhead is, for a KeyReady key of a Groups with tenants, how
	// many other tenants with a ready key take a turn before the key's
	// tenant takes its next one: those whose virtual time is lower, or
	// the same with a smaller name, as Get orders the turns. The key's own
	// tenant is not counted. It is counted up to the bound given to Key;
	// 0 otherwise.
	TenantsAhead int
	// Leases counts the key's leases out. With GroupsConfig.PerKey > 1 a
	// key with one or more is KeyLeased unless held, whatever its next
	// lease waits for, and its Attempt is that of the lease of its first
	// messages out.
	Leases int
}

// Key returns what key is doing, and reports whether it has messages or
// a lease. It changes nothing. It costs a map lookup, plus, for a ready
// key, a walk of the ready order up to maxAhead keys: a key with more
// ready keys ahead of it shows maxAhead; with tenants, a walk of the
// tenants before its tenant in the turns, up to maxAhead of them too
// (with PerKey > 1, plus the stale entries at the front of their keys).
func (g *Groups[K, M]) Key(key K, maxAhead int) (KeyInfo, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gr := g.groups[key]
	if gr == nil {
		return KeyInfo{}, false
	}
	info := KeyInfo{Messages: len(gr.msgs), Attempt: gr.attempt}
	if g.perKey > 1 {
		return g.runsInfo(gr, maxAhead), true
	}
	if gr.state == stateLeased {
		info.Leases = 1
	}
	switch gr.state {
	case stateReady:
		info.State = KeyReady
		info.Ahead = g.ahead(gr, maxAhead)
		info.TenantsAhead = g.tenantsAhead(gr, maxAhead)
	case stateLeased:
		info.State = KeyLeased
	case stateDelayed:
		info.State = KeyDeferred
		if gr.retry {
			info.State = KeyRetrying
		}
		info.Due = g.delay.ns.Time(gr.due)
	case stateHeld:
		info.State = KeyHeld
	}
	return info, true
}

// ahead returns the number of ready keys before gr in the ready order, up
// to most.
func (g *Groups[K, M]) ahead(gr *group[M], most int) int {
	r := g.readyOf(gr)
	for i := range min(r.n, most) {
		if r.buf[(r.head+i)&(len(r.buf)-1)].gr == gr {
			return i
		}
	}
	return max(most, 0)
}

// runsInfo is Key's answer for a key of a Groups with PerKey > 1.
func (g *Groups[K, M]) runsInfo(gr *group[M], maxAhead int) KeyInfo {
	info := KeyInfo{Messages: len(gr.msgs), Attempt: 1, Leases: gr.leased}
	if len(gr.runs) > 0 {
		info.Attempt = gr.runs[0].attempt
	}
	if i := gr.kept(); i >= 0 {
		info.Attempt = gr.runs[i].attempt
	}
	switch {
	case gr.state == stateHeld:
		info.State = KeyHeld
	case gr.leased > 0:
		info.State = KeyLeased
		for _, r := range gr.runs {
			if r.out {
				info.Attempt = r.attempt
				break
			}
		}
	case gr.state == stateReady:
		info.State = KeyReady
		info.Ahead = g.aheadRuns(gr, maxAhead)
		info.TenantsAhead = g.tenantsAhead(gr, maxAhead)
	case gr.state == stateDelayed:
		info.State = KeyDeferred
		if gr.retry {
			info.State = KeyRetrying
		}
		info.Due = g.delay.ns.Time(gr.due)
	}
	return info
}

// aheadRuns is ahead for a Groups with PerKey > 1, whose ready order may
// hold stale entries: those are not counted, nor taken for gr's own.
func (g *Groups[K, M]) aheadRuns(gr *group[M], most int) int {
	r := g.readyOf(gr)
	seen := map[*group[M]]int{}
	n := 0
	for i := range r.n {
		e := r.buf[(r.head+i)&(len(r.buf)-1)].gr
		if seen[e] < e.skip {
			seen[e]++
			continue
		}
		if e == gr {
			return n
		}
		if n++; n >= most {
			break
		}
	}
	return max(most, 0)
}
