package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
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

// pageScan bounds the keys that one page of Keys reads, as pgstore's
// does: a page whose filter few keys pass stops there, short or empty,
// with a cursor to go on from.
const pageScan = 2000

// Keys implements Inspector. Pages follow the order in which the keys'
// records were created (a key that empties and comes back is created
// again, at the end); a cursor is the creation number of the last key a
// page read. A page finds its cursor in O(log n) for a queue of n keys,
// then reads the keys from there, each in O(1) (a run of keys removed
// meanwhile in O(log n)), until Limit+1 of them passed the filter or it
// read 2,000: O(log n + Limit) without a filter, O(log n + 2,000) at most.
// Only a filter makes a page short before the last: then it may be empty,
// with a Next.
func (m *Memory) Keys(ctx context.Context, queue string, q KeyQuery) (KeyPage, error) {
	if err := ctx.Err(); err != nil {
		return KeyPage{}, err
	}
	after, err := decodeCursor(q.Cursor)
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
	o := &qu.created
	var (
		page  KeyPage
		shown uint64 // the seq of the last key shown
		read  int
	)
	for i := o.next(o.after(after)); i < len(o.entries); i = o.next(i + 1) {
		k := o.entries[i].k
		read++
		if strings.HasPrefix(k.name, q.Prefix) && (q.State == 0 || k.state(now) == q.State) {
			if len(page.Keys) == limit { // one more passes: a page follows
				page.Next = encodeCursor(shown)
				break
			}
			page.Keys = append(page.Keys, m.info(qu, k, now))
			shown = k.seq
		}
		if read == pageScan {
			if o.next(i+1) < len(o.entries) {
				page.Next = encodeCursor(k.seq)
			}
			break
		}
	}
	return page, nil
}

// encodeCursor returns the cursor of the page after the key whose seq is
// seq: never "", which is the first page's.
func encodeCursor(seq uint64) string {
	return "m" + strconv.FormatUint(seq, 36)
}

// decodeCursor returns the seq that cursor is after: 0, before every key,
// for "".
func decodeCursor(cursor string) (uint64, error) {
	if cursor == "" {
		return 0, nil
	}
	seq, err := strconv.ParseUint(strings.TrimPrefix(cursor, "m"), 36, 64)
	if err != nil || cursor[0] != 'm' {
		return 0, fmt.Errorf("store: KeyQuery.Cursor %q is not a cursor of Memory", cursor)
	}
	return seq, nil
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
		info.TenantsAhead = q.tenantsAhead(k, now)
	}
	return info, true, nil
}

// ahead counts the ready keys of q that a Claim would lease before k,
// which is ready and not paused, up to MaxAhead: the keys of the live
// entries of the schedule before k's (which orders entries by their
// instant and then by their order) that are ready at now. It walks the
// schedule's heap from its root down to k's place only, no entry coming
// before its parent: O(MaxAhead) plus the entries before k's that Claims
// pass over (stale ones, and those of keys that are not ready, a lease of
// theirs having lapsed), each settled on the way.
func (q *queue) ahead(k *key, now int64) int {
	if q.fair != nil {
		return q.aheadFair(k, now)
	}
	n := 0
	q.sched.Walk(q.countAhead(k, now, nil, &n))
	return n
}

// countAhead returns the visit of a walk of a heap of slots that counts
// into n the keys of tenant t (of any tenant if t is nil) whose live
// entries come before k's and which are ready at now, up to MaxAhead.
func (q *queue) countAhead(k *key, now int64, t *tenant, n *int) func(slot, int64) bool {
	return func(s slot, at int64) bool {
		if *n >= MaxAhead || at > k.at || (at == k.at && s.order >= k.order) {
			return false // neither this entry nor any below it is before k's
		}
		if o := s.k; s.live() && (t == nil || q.tenantOf(o) == t) {
			if o.settle(now); o.isReady(now) {
				*n++
			}
		}
		return true
	}
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
	case k.forToken(now):
		return Deferred
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
		i.ForToken = i.State == Deferred && k.forToken(now)
	}
	return i
}
