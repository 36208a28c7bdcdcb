package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
)

// Queues implements Inspector. It visits every key of every queue, as
// Stats does.
func (m *Memory) Queues(ctx context.Context) ([]QueueInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.nano.Now()
	var out []QueueInfo
	for name, q := range m.queues {
		if len(q.keys) == 0 && len(q.dead) == 0 {
			continue // a record kept for its Waits, holding nothing
		}
		info := QueueInfo{Name: name, Stats: q.stats(now)}
		if q.fair != nil {
			q.promote(now)
			if _, k, ok := q.fair.peek(); ok {
				info.Oldest = m.nano.Time(k.vals[0].at)
			}
		} else if k, at, ok := q.top(); ok && at <= now {
			info.Oldest = m.nano.Time(k.vals[0].at)
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b QueueInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Keys implements Inspector. Pages are in the order of the keys' bytes,
// and full: only the last page is short. A page visits every key of the
// queue once, keeping the first Limit after the cursor that pass the
// filter in a bounded heap: O(n log Limit) for a queue of n keys, and
// O(Limit) memory.
func (m *Memory) Keys(ctx context.Context, queue string, q KeyQuery) (KeyPage, error) {
	if err := ctx.Err(); err != nil {
		return KeyPage{}, err
	}
	after, from, err := decodeCursor(q.Cursor)
	if err != nil {
		return KeyPage{}, err
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	m.mu.Lock()
	defer m.mu.Unlock()
	qu := m.queue(queue, false)
	if qu == nil {
		return KeyPage{}, nil
	}
	now := m.nano.Now()
	// first keeps the limit+1 least names that pass, the one more telling
	// whether a page follows.
	first := firstNames{max: limit + 1}
	for name, k := range qu.keys {
		if (from && name <= after) || !strings.HasPrefix(name, q.Prefix) || !first.wants(name) {
			continue
		}
		if q.State != 0 && k.state(now) != q.State {
			continue
		}
		first.add(name)
	}
	names := first.sorted()
	var page KeyPage
	if len(names) > limit {
		names = names[:limit]
		page.Next = encodeCursor(names[limit-1])
	}
	page.Keys = make([]KeyInfo, len(names))
	for i, name := range names {
		page.Keys[i] = m.info(qu, qu.keys[name], now)
	}
	return page, nil
}

// encodeCursor returns the cursor of the page after the one whose last
// key is key: never "", which is the first page's, even for the empty key.
func encodeCursor(key string) string {
	return "k" + base64.RawURLEncoding.EncodeToString([]byte(key))
}

// decodeCursor returns the key that cursor is after, and whether there is
// one ("" starts at the first key).
func decodeCursor(cursor string) (string, bool, error) {
	if cursor == "" {
		return "", false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(cursor, "k"))
	if err != nil || cursor[0] != 'k' {
		return "", false, fmt.Errorf("store: KeyQuery.Cursor %q is not a cursor of Memory", cursor)
	}
	return string(b), true, nil
}

// Key implements Inspector.
func (m *Memory) Key(ctx context.Context, queue, key string) (KeyInfo, bool, error) {
	if err := ctx.Err(); err != nil {
		return KeyInfo{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil {
		return KeyInfo{}, false, nil
	}
	k := q.keys[key]
	if k == nil {
		if q.keyPaused(key) {
			return KeyInfo{Key: key, Paused: true}, true, nil
		}
		return KeyInfo{}, false, nil
	}
	now := m.nano.Now()
	info := m.info(q, k, now)
	if info.State == Ready && !info.Paused {
		info.Ahead = q.ahead(k, now)
	}
	return info, true, nil
}

// ahead counts the ready keys of q that a Claim would lease before k,
// which is ready, up to MaxAhead: those before it in the schedule, which
// orders keys by when they are ready and then by when they were
// scheduled. It visits every key of q.
func (q *queue) ahead(k *key, now int64) int {
	n := 0
	for _, o := range q.keys {
		if o == k || q.keyPaused(o.name) {
			continue
		}
		if o.settle(now); !o.isReady(now) {
			continue
		}
		if q.fair != nil && q.tenantOf(o) != q.tenantOf(k) {
			continue
		}
		if o.at < k.at || (o.at == k.at && o.order < k.order) {
			n++
		}
	}
	return min(n, MaxAhead)
}

// Values implements Inspector.
func (m *Memory) Values(ctx context.Context, queue, key string, limit int) ([]StoredValue, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queue(queue, false)
	if q == nil || q.keys[key] == nil || limit < 1 {
		return nil, nil
	}
	k := q.keys[key]
	out := make([]StoredValue, min(limit, len(k.vals)))
	for i := range out {
		out[i] = StoredValue{Value: bytes.Clone(k.vals[i].b), Added: m.nano.Time(k.vals[i].at)}
	}
	return out, nil
}

// state returns what k, which has values, is doing at now.
func (k *key) state(now int64) KeyState {
	k.settle(now)
	switch {
	case k.held:
		return Held
	case k.leased > 0:
		return Leased
	case k.isReady(now): // due, or its lease lapsed
		return Ready
	case len(k.runs) > 0 && k.runs[0].retry:
		return Retrying
	case len(k.runs) > 0:
		return Deferred
	case k.ready() > 0:
		return Scheduled // its first free value is not due yet
	}
	return Debouncing // nothing but an open burst
}

// shown returns the run KeyInfo shows of k: of a Leased key the first
// out on a lease, else the first kept; nil if none.
func (k *key) shown() *run {
	if k.leased > 0 && !k.held {
		for i := range k.runs {
			if k.runs[i].out {
				return &k.runs[i]
			}
		}
	}
	if i := k.kept(); i >= 0 {
		return &k.runs[i]
	}
	return nil
}

// info returns what k, a key of q which has values, is doing at now, all
// but Ahead.
func (m *Memory) info(q *queue, k *key, now int64) KeyInfo {
	i := KeyInfo{
		Key:    k.name,
		State:  k.state(now),
		Fence:  k.fence,
		Values: len(k.vals),
		Oldest: m.nano.Time(k.vals[0].at),
		Paused: q.keyPaused(k.name),
	}
	if k.leased > 1 {
		i.Leases = k.leased
	}
	r := k.shown()
	if r != nil {
		i.Attempt, i.Err = r.attempt, r.err
	}
	switch i.State {
	case Ready:
		i.Since = m.nano.Time(k.readyAt())
	case Leased:
		i.Since, i.Until, i.Holder, i.Fence = m.nano.Time(r.since), m.nano.Time(r.at), r.holder, r.fence
	case Held:
		i.Since = m.nano.Time(k.heldSince)
	case Debouncing:
		i.Until, i.MaxWait = m.nano.Time(k.due), k.maxWait
	default: // Retrying, Deferred, Scheduled
		i.Until = m.nano.Time(k.readyAt())
	}
	return i
}
