package store

import "context"

// Stats implements Store. It visits every key of queue.
func (m *Memory) Stats(ctx context.Context, queue string) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil {
		return Stats{}, nil
	}
	return q.stats(m.nano.Now()), nil
}

// stats returns the counts of q at now. It visits every key of q.
func (q *queue) stats(now int64) Stats {
	var s Stats
	for _, k := range q.keys {
		k.settle(now)
		s.Values += len(k.vals)
		s.Keys++
		if k.burst > 0 {
			s.Pending++
		}
		switch {
		case k.held:
			s.Held++
			s.HeldValues += len(k.vals)
		case k.leased > 0:
			s.Leased++
		case k.isReady(now): // due, or its lease lapsed
			if !q.keyPaused(k.name) {
				s.Ready++
			}
		case q.keyPaused(k.name):
		case len(k.runs) > 0 && k.runs[0].retry:
			s.Retrying++
			s.Behind += len(k.vals) - k.runs[0].n
		}
	}
	s.Dead = len(q.dead)
	s.PausedKeys, s.Paused = len(q.pausedKeys), q.paused
	return s
}
