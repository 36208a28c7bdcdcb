package store

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"time"
)

// grave is a dead letter kept by Memory, with when it was dropped as a
// reading of the engine's clock.
type grave struct {
	DeadLetter
	at int64
}

// bury keeps the n values of k from off on, whose lease at attempt is
// being dropped, as a dead letter of q.
func (m *Memory) bury(q *queue, k *key, off, n, attempt int, why string, now int64) {
	vals := make([][]byte, n)
	for i, v := range k.vals[off : off+n] {
		vals[i] = v.b // the key gives them up
	}
	m.deadID++
	q.dead = append(q.dead, grave{DeadLetter{
		ID:      m.deadID,
		Key:     k.name,
		Values:  vals,
		Err:     why,
		Attempt: attempt,
		At:      m.nano.Time(now),
	}, now})
}

// DeadLetters implements DeadLetters. A limit below 1 returns none.
func (m *Memory) DeadLetters(ctx context.Context, queue string, after uint64, limit int) ([]DeadLetter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil || limit < 1 {
		return nil, nil
	}
	i := sort.Search(len(q.dead), func(i int) bool { return q.dead[i].ID > after })
	var out []DeadLetter
	for _, g := range q.dead[i:min(i+limit, len(q.dead))] {
		d := g.DeadLetter
		d.Values = make([][]byte, len(g.Values))
		for j, v := range g.Values {
			d.Values[j] = bytes.Clone(v)
		}
		out = append(out, d)
	}
	return out, nil
}

// Redrive implements DeadLetters: the values are added as Add does with a
// zero AddParams.
func (m *Memory) Redrive(ctx context.Context, queue string, id uint64) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil {
		return false, nil
	}
	i, ok := q.find(id)
	if !ok {
		return false, nil
	}
	g := q.dead[i]
	q.dead = slices.Delete(q.dead, i, i+1)
	if len(g.Values) > 0 {
		m.add(q, g.Key, g.Values, AddParams{}, m.nano.Now())
	}
	return true, nil
}

// Purge implements DeadLetters.
func (m *Memory) Purge(ctx context.Context, queue string, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil {
		return 0, nil
	}
	cut := m.nano.Of(before)
	n := len(q.dead)
	q.dead = slices.DeleteFunc(q.dead, func(g grave) bool { return g.at < cut })
	return n - len(q.dead), nil
}

// find returns the index of the first dead letter of q whose ID is at
// least id, and whether its ID is id.
func (q *queue) find(id uint64) (int, bool) {
	return slices.BinarySearchFunc(q.dead, id, func(g grave, id uint64) int {
		switch {
		case g.ID < id:
			return -1
		case g.ID > id:
			return 1
		}
		return 0
	})
}
