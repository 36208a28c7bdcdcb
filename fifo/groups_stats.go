package fifo

// Len returns the number of messages not out on a lease: ready, behind a
// lease, delayed, or held.
func (g *Groups[K, M]) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}

// Leased returns the number of leases not yet ended.
func (g *Groups[K, M]) Leased() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.leases
}

// Keys returns the number of keys that have messages or a lease.
func (g *Groups[K, M]) Keys() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.groups)
}

// GroupsStats is a snapshot of the counts of a Groups, taken at one instant.
type GroupsStats struct {
	// Messages counts every message stored, leased ones included.
	Messages int
	// Waiting counts the messages not out on a lease, as Len.
	Waiting int
	// Leases counts the leases not yet ended, as Leased.
	Leases int
	// Keys counts the keys that have messages or a lease, as Keys.
	Keys int
	// Delayed counts the keys waiting for a Retry or Defer delay.
	Delayed int
	// Retrying counts the keys waiting for a Retry delay: their head
	// lease failed and is not due again yet. Keys waiting for a Defer
	// delay are counted in Delayed only.
	Retrying int
	// BehindRetrying counts the messages put behind the retried leases of
	// the Retrying keys, which wait for them in Put order; the retried
	// messages themselves are not counted. With MaxBatch 1 these are the
	// messages blocked by a failing head.
	BehindRetrying int
	// Held counts the held keys.
	Held int
	// HeldMessages counts the messages of held keys, those put behind
	// the held head included. Messages - HeldMessages is the work that
	// will be handed out without a Release.
	HeldMessages int
}

// Stats returns the current counts. It takes the lock once and allocates
// nothing.
func (g *Groups[K, M]) Stats() GroupsStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	return GroupsStats{
		Messages:       g.stored,
		Waiting:        g.waiting,
		Leases:         g.leases,
		Keys:           len(g.groups),
		Delayed:        g.delayed,
		Retrying:       g.retrying,
		BehindRetrying: g.behind,
		Held:           g.held,
		HeldMessages:   g.heldMsgs,
	}
}
