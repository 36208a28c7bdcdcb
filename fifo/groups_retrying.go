package fifo

// Behind returns the number of messages of key behind its head batch, which
// wait for it: behind the lease out, or behind a retried or deferred batch
// that the next lease takes again; for a key whose next lease is yet to be
// cut, behind what MaxBatch lets that lease take (none with MaxBatch 0).
// With PerKey > 1, a key with batches leased or kept counts the messages
// behind them all, never leased.
func (g *Groups[K, M]) Behind(key K) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	gr := g.groups[key]
	switch {
	case gr == nil:
		return 0
	case g.perKey > 1 && len(gr.runs) > 0:
		return gr.free()
	case gr.head > 0:
		return len(gr.msgs) - gr.head
	case g.maxBatch > 0 && len(gr.msgs) > g.maxBatch:
		return len(gr.msgs) - g.maxBatch
	}
	return 0
}
