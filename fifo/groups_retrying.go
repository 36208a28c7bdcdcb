package fifo

// Retrying returns the number of keys whose head batch failed (it was
// retried) and waits for its delay, and the number of messages queued
// behind those batches: the messages a failing head keeps from being
// processed. It walks the keys only while some key is delayed.
func (g *Groups[K, M]) Retrying() (keys, behind int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.delayed == 0 {
		return 0, 0
	}
	for _, gr := range g.groups {
		if gr.state == stateDelayed && gr.attempt > 1 {
			keys++
			behind += g.behind(gr)
		}
	}
	return keys, behind
}

// Behind returns the number of messages of key behind its head batch: the
// lease out, or the messages its next lease will carry (all of them, with
// MaxBatch 0).
func (g *Groups[K, M]) Behind(key K) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	gr := g.groups[key]
	switch {
	case gr == nil:
		return 0
	case gr.state == stateLeased:
		return len(gr.msgs) - gr.leased
	}
	return g.behind(gr)
}

func (g *Groups[K, M]) behind(gr *group[M]) int {
	if n := len(gr.msgs); g.maxBatch > 0 && n > g.maxBatch {
		return n - g.maxBatch
	}
	return 0
}
