package store

import "context"

// A paused queue keeps its schedule: Claim leases nothing and says Never,
// and Wait sleeps through it, until ResumeQueue. A paused key keeps the
// instant it is ready at (key.at) but no entry in the schedule, so that
// neither Claim nor Wait sees it; ResumeKey gives it one back, at that
// instant or, if it passed, at the tail of the ready order. The pauses of
// keys live apart from the keys' records, which go when their values do.

// keyPaused reports whether name is a paused key of q.
func (q *queue) keyPaused(name string) bool {
	if len(q.pausedKeys) == 0 {
		return false
	}
	_, ok := q.pausedKeys[name]
	return ok
}

// PauseQueue implements Operator.
func (m *Memory) PauseQueue(ctx context.Context, queue string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, true)
	if q.paused {
		return false, nil
	}
	q.paused = true
	q.wake()
	return true, nil
}

// ResumeQueue implements Operator.
func (m *Memory) ResumeQueue(ctx context.Context, queue string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil || !q.paused {
		return false, nil
	}
	q.paused = false
	q.wake()
	return true, nil
}

// QueuePaused implements Operator.
func (m *Memory) QueuePaused(ctx context.Context, queue string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	return q != nil && q.paused, nil
}

// PauseKey implements Operator.
func (m *Memory) PauseKey(ctx context.Context, queue, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, true)
	if q.keyPaused(key) {
		return false, nil
	}
	if q.pausedKeys == nil {
		q.pausedKeys = make(map[string]struct{})
	}
	q.pausedKeys[key] = struct{}{}
	if k := q.keys[key]; k != nil {
		q.unschedule(k) // k.at stays: when it is ready, or its lease lapses
	}
	q.wake()
	return true, nil
}

// ResumeKey implements Operator.
func (m *Memory) ResumeKey(ctx context.Context, queue, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil || !q.keyPaused(key) {
		return false, nil
	}
	delete(q.pausedKeys, key)
	if k := q.keys[key]; k != nil && !k.held {
		now := m.nano.Now()
		k.settle(now)
		k.track(now)
		if k.isReady(now) {
			k.place = now // a key ready by now goes to the tail
		}
		k.resched(q, now)
	}
	q.wake()
	return true, nil
}

// RetryNow implements Operator.
func (m *Memory) RetryNow(ctx context.Context, queue, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil || q.keys[key] == nil {
		return false, nil
	}
	k, now := q.keys[key], m.nano.Now()
	if s := k.state(now); s != Retrying && s != Deferred {
		return false, nil
	}
	k.runs[k.kept()].at = now
	k.reschedule(q, now, true)
	q.wake()
	return true, nil
}

// DropKey implements Operator.
func (m *Memory) DropKey(ctx context.Context, queue, key, reason string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil || q.keys[key] == nil {
		return 0, nil
	}
	k, now := q.keys[key], m.nano.Now()
	n := len(k.vals)
	attempt := m.info(q, k, now).Attempt
	m.bury(q, k, 0, n, attempt, reason, now)
	q.values -= n
	q.forget(k, now) // its lease, if one is out, with it: the fence no longer matches
	q.wake()
	return n, nil
}
