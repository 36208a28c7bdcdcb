package store_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// TestMemoryModel runs random operations on a Memory and on a reference
// model that scans every key for every decision, on a mock clock that
// moves in steps small enough for deadlines to tie, and checks that both
// answer alike: leases, next, more, errors, stats and dead letters.
func TestMemoryModel(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			runModel(t, rand.New(rand.NewPCG(seed, 7)), 300)
		})
	}
}

func runModel(t *testing.T, rng *rand.Rand, ops int) {
	ctx := context.Background()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	mem := store.NewMemory(store.MemoryConfig{Clock: clk})
	ref := &model{now: clk.Now().UnixNano(), keys: map[string]*mkey{}}
	const q = "q"
	keys := []string{"a", "b", "c", "d"}
	ms := time.Millisecond
	pick := func(ds ...time.Duration) time.Duration { return ds[rng.IntN(len(ds))] }
	var leases []store.Lease
	var added int
	for op := range ops {
		where := func() string { return fmt.Sprintf("op %d", op) }
		switch r := rng.IntN(100); {
		case r < 25:
			key := keys[rng.IntN(len(keys))]
			vals := make([][]byte, 1+rng.IntN(3))
			for i := range vals {
				added++
				vals[i] = []byte(fmt.Sprint("v", added))
			}
			p := []store.AddParams{{}, {}, {Wait: 10 * ms}, {Wait: 10 * ms, MaxWait: 25 * ms}, {Wait: 20 * ms, MaxWait: 15 * ms}}[rng.IntN(5)]
			require.NoError(t, mem.Add(ctx, q, key, vals, p), where())
			ref.add(key, vals, p)
		case r < 45:
			d := time.Duration(rng.IntN(16)) * ms
			clk.Add(d)
			ref.now += int64(d)
		case r < 65:
			p := store.ClaimParams{Keys: 1 + rng.IntN(3), MaxBatch: rng.IntN(4), TTL: pick(10*ms, 30*ms)}
			got, next, err := mem.Claim(ctx, q, p)
			require.NoError(t, err, where())
			want, wantNext := ref.claim(q, p)
			require.Equal(t, want, got, where())
			require.Equal(t, wantNext, next, where())
			leases = append(leases, got...)
			if len(leases) > 16 {
				leases = leases[len(leases)-16:]
			}
		case r < 82 && len(leases) > 0:
			l := leases[rng.IntN(len(leases))]
			o := store.Outcome{
				Kind:  []store.OutcomeKind{store.Ack, store.Ack, store.Drop, store.Retry, store.Defer, store.Hold}[rng.IntN(6)],
				After: pick(0, 5*ms, 20*ms, store.Never),
				Err:   "e",
			}
			more, err := mem.Finish(ctx, l, o)
			wantMore, wantErr := ref.finish(l, o)
			require.Equal(t, wantErr, err, where())
			require.Equal(t, wantMore, more, where())
		case r < 87 && len(leases) > 0:
			l := leases[rng.IntN(len(leases))]
			ttl := pick(10*ms, 30*ms)
			require.Equal(t, ref.extend(l, ttl), mem.Extend(ctx, l, ttl), where())
		case r < 91:
			key := keys[rng.IntN(len(keys))]
			ok, err := mem.Release(ctx, q, key)
			require.NoError(t, err, where())
			require.Equal(t, ref.release(key), ok, where())
		case r < 95:
			st, err := mem.Stats(ctx, q)
			require.NoError(t, err, where())
			require.Equal(t, ref.stats(), st, where())
		case r < 97:
			after, limit := uint64(rng.IntN(int(ref.deadID)+2)), 1+rng.IntN(3)
			ds, err := mem.DeadLetters(ctx, q, after, limit)
			require.NoError(t, err, where())
			require.Equal(t, ref.deadLetters(after, limit), ds, where())
		case r < 99:
			id := uint64(rng.IntN(int(ref.deadID) + 2))
			ok, err := mem.Redrive(ctx, q, id)
			require.NoError(t, err, where())
			require.Equal(t, ref.redrive(id), ok, where())
		default:
			before := clk.Now().Add(-time.Duration(rng.IntN(40)) * ms)
			n, err := mem.Purge(ctx, q, before)
			require.NoError(t, err, where())
			require.Equal(t, ref.purge(before.UnixNano()), n, where())
		}
	}
}

// model is the reference: the rules of the store doc, written as plainly
// as they read, with a scan of every key for every decision.
type model struct {
	now    int64
	fence  uint64
	deadID uint64
	ticket uint64 // orders keys whose ready instants tie: first placed, first served
	keys   map[string]*mkey
	graves []mgrave
}

type mval struct {
	v  []byte
	at int64
}

type mstate int

const (
	mIdle mstate = iota
	mLeased
	mHeld
)

type mkey struct {
	vals       []mval
	batch      int // the head batch kept for the next lease, or out on the lease
	attempt    int // Attempt of the current or next lease
	burst      int // values at the tail still debouncing
	first, due int64
	state      mstate
	placed     bool
	at         int64 // idle: ready instant; leased: when the lease lapses
	ticket     uint64
	fence      uint64
	retry      bool
}

type mgrave struct {
	d  store.DeadLetter
	at int64
}

func addSat(a int64, d time.Duration) int64 {
	if d > 0 && a > math.MaxInt64-int64(d) {
		return math.MaxInt64
	}
	return a + int64(d)
}

func (m *model) place(k *mkey, at int64) {
	m.ticket++
	k.placed, k.at, k.ticket = true, at, m.ticket
}

func (m *model) settle(k *mkey) {
	if k.burst > 0 && k.due <= m.now {
		k.burst = 0
	}
}

func (m *model) add(name string, vals [][]byte, p store.AddParams) {
	k := m.keys[name]
	if k == nil {
		k = &mkey{attempt: 1}
		m.keys[name] = k
	}
	m.settle(k)
	hadReady := len(k.vals) > k.burst
	for _, v := range vals {
		k.vals = append(k.vals, mval{v, m.now})
	}
	if p.Wait == 0 {
		k.burst = 0
	} else {
		if k.burst == 0 {
			k.first = m.now
		}
		k.burst += len(vals)
		k.due = addSat(m.now, p.Wait)
		if p.MaxWait > 0 {
			k.due = min(k.due, addSat(k.first, p.MaxWait))
		}
		m.settle(k)
	}
	if k.state != mIdle || k.batch > 0 || hadReady {
		return // its place stands, or it has none
	}
	at := k.due
	if len(k.vals) > k.burst {
		at = m.now
	}
	if !k.placed || k.at != at {
		m.place(k, at)
	}
}

// first returns the ready key that came first, if any.
func (m *model) first() (string, *mkey) {
	var bestName string
	var best *mkey
	for name, k := range m.keys {
		if k.state == mHeld || k.at > m.now {
			continue
		}
		if best == nil || k.at < best.at || (k.at == best.at && k.ticket < best.ticket) {
			bestName, best = name, k
		}
	}
	return bestName, best
}

func (m *model) claim(q string, p store.ClaimParams) ([]store.Lease, time.Duration) {
	var out []store.Lease
	for len(out) < p.Keys {
		name, k := m.first()
		if k == nil {
			break
		}
		if k.state == mLeased {
			k.attempt++ // lapsed
		}
		m.settle(k)
		n := k.batch
		if n == 0 {
			n = len(k.vals) - k.burst
			if p.MaxBatch > 0 {
				n = min(n, p.MaxBatch)
			}
		}
		m.fence++
		k.state, k.batch, k.fence, k.retry = mLeased, n, m.fence, false
		m.place(k, addSat(m.now, p.TTL))
		vals := make([][]byte, n)
		for i := range n {
			vals[i] = k.vals[i].v
		}
		out = append(out, store.Lease{Queue: q, Key: name, Values: vals, Attempt: k.attempt, Fence: k.fence, First: time.Unix(0, k.vals[0].at)})
	}
	next := store.Never
	for _, k := range m.keys {
		if k.state != mHeld && k.at < math.MaxInt64 {
			next = min(next, time.Duration(max(k.at-m.now, 0)))
		}
	}
	return out, next
}

func (m *model) current(l store.Lease) *mkey {
	k := m.keys[l.Key]
	if k == nil || k.state != mLeased || k.fence != l.Fence || k.at <= m.now {
		return nil
	}
	return k
}

func (m *model) finish(l store.Lease, o store.Outcome) (bool, error) {
	k := m.current(l)
	if k == nil {
		return false, store.ErrLeaseLost
	}
	m.settle(k)
	switch o.Kind {
	case store.Ack, store.Drop:
		if o.Kind == store.Drop {
			m.deadID++
			vals := make([][]byte, k.batch)
			for i := range vals {
				vals[i] = k.vals[i].v
			}
			m.graves = append(m.graves, mgrave{store.DeadLetter{ID: m.deadID, Key: l.Key, Values: vals, Err: o.Err, Attempt: k.attempt, At: time.Unix(0, m.now)}, m.now})
		}
		k.vals = k.vals[k.batch:]
		k.state, k.batch, k.attempt = mIdle, 0, 1
		if len(k.vals) == 0 {
			delete(m.keys, l.Key)
			return false, nil
		}
		if len(k.vals) > k.burst {
			m.place(k, m.now)
		} else {
			m.place(k, k.due)
		}
	case store.Retry, store.Defer:
		if o.Kind == store.Retry {
			k.attempt++
		}
		k.state, k.retry = mIdle, o.Kind == store.Retry
		m.place(k, addSat(m.now, max(o.After, 0)))
	case store.Hold:
		k.state = mHeld
	}
	return true, nil
}

func (m *model) extend(l store.Lease, ttl time.Duration) error {
	k := m.current(l)
	if k == nil {
		return store.ErrLeaseLost
	}
	m.place(k, addSat(m.now, ttl))
	return nil
}

func (m *model) release(name string) bool {
	k := m.keys[name]
	if k == nil || k.state != mHeld {
		return false
	}
	m.settle(k)
	k.state, k.attempt, k.batch = mIdle, 1, 0
	m.place(k, m.now)
	return true
}

func (m *model) stats() store.Stats {
	var s store.Stats
	for _, k := range m.keys {
		m.settle(k)
		s.Values += len(k.vals)
		s.Keys++
		if k.burst > 0 {
			s.Pending++
		}
		switch {
		case k.state == mHeld:
			s.Held++
			s.HeldValues += len(k.vals)
		case k.at <= m.now:
			s.Ready++
		case k.state == mLeased:
			s.Leased++
		case k.retry:
			s.Retrying++
			s.Behind += len(k.vals) - k.batch
		}
	}
	s.Dead = len(m.graves)
	return s
}

func (m *model) deadLetters(after uint64, limit int) []store.DeadLetter {
	var out []store.DeadLetter
	for _, g := range m.graves {
		if g.d.ID > after && len(out) < limit {
			out = append(out, g.d)
		}
	}
	return out
}

func (m *model) redrive(id uint64) bool {
	for i, g := range m.graves {
		if g.d.ID == id {
			m.graves = append(m.graves[:i:i], m.graves[i+1:]...)
			m.add(g.d.Key, g.d.Values, store.AddParams{})
			return true
		}
	}
	return false
}

func (m *model) purge(before int64) int {
	n := 0
	kept := m.graves[:0:0]
	for _, g := range m.graves {
		if g.at < before {
			n++
		} else {
			kept = append(kept, g)
		}
	}
	m.graves = kept
	return n
}
