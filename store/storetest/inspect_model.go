package storetest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// ikey is what testInspectModel expects of a key: the contract's
// semantics, written plainly.
type ikey struct {
	vals  []string
	burst int // the last burst values are an open burst
	// wait and maxWait are those of the last Add with a Wait.
	wait, maxWait time.Duration
	batch         int // the head batch's size, once a lease fixed it
	state         store.KeyState
	attempt       int  // Lease.Attempt of the head batch's last lease; 0: none
	retried       bool // that lease ended with a Retry: the next counts one more
	fence         uint64
	holder        string
	err           string
	lease         store.Lease // while Leased
	// The state's time (Since, or Until for Retrying and Deferred) is the
	// Added of value sinceAt when it is 0 or more, else within [lo, hi]
	// (and, for a delay, an hour after); once read, it must not move.
	sinceAt int
	lo, hi  time.Time
	seen    store.KeyInfo
}

// ready reports how many values lead the key outside its open burst.
func (k *ikey) ready() int { return len(k.vals) - k.burst }

// imodel is the model of testInspectModel's queue.
type imodel struct {
	keys  map[string]*ikey
	order []string // the ready keys, in the order they became ready
	fence uint64   // the largest fence seen
	dead  int
}

// becomeReady puts k at the tail of the ready order.
func (m *imodel) becomeReady(name string, k *ikey, sinceAt int, b, a time.Time) {
	k.state, k.sinceAt, k.lo, k.hi, k.seen = store.Ready, sinceAt, b, a, store.KeyInfo{}
	m.order = append(m.order, name)
}

// enter moves k into state, whose time is within [b, a].
func (k *ikey) enter(state store.KeyState, b, a time.Time) {
	k.state, k.sinceAt, k.lo, k.hi, k.seen = state, -1, b, a, store.KeyInfo{}
}

// testInspectModel: random Adds, Claims, Finishes and Releases on a few
// keys with unusual bytes, each followed by what the contract says every
// key must now show: a walk of the queue's pages (of a random Limit) and
// Key agree with a plain model of the contract's semantics on every
// field, Key's Ahead and times included (exactly where the engine's own
// times fix them, within Late where the engine's clock must be compared
// with the wall clock's, and unmoved while the key does not change);
// Values gives the key's values; Stats and Queues agree; Claim leases the
// keys the model says.
// Delays are 0 or an hour, so that time passing changes nothing.
func testInspectModel(f *fixture) {
	in := f.inspector()
	_, dead := f.s.(store.DeadLetters)
	rng := rand.New(rand.NewPCG(20, 1))
	universe := []string{"a", "", "b%", "c_d", "\xff", "e:{f}", "g\\"}
	hour := time.Hour
	m := &imodel{keys: map[string]*ikey{}}
	var leases []store.Lease
	added := 0
	const ops = 200
	for op := range ops {
		where := fmt.Sprintf("op %d", op)
		switch r := rng.IntN(100); {
		case r < 35 || (r < 88 && r >= 60 && len(leases) == 0):
			name := universe[rng.IntN(len(universe))]
			vals := make([]string, 1+rng.IntN(2))
			for i := range vals {
				added++
				vals[i] = fmt.Sprint("v", added)
			}
			p := []store.AddParams{{}, {}, {Wait: hour}, {Wait: hour, MaxWait: 2 * hour}, {Wait: 2 * hour, MaxWait: hour}}[rng.IntN(5)]
			b := time.Now()
			f.addP(name, p, vals...)
			m.add(name, vals, p, b, time.Now())
		case r < 60:
			p := store.ClaimParams{Keys: 1 + rng.IntN(3), MaxBatch: rng.IntN(4), TTL: hour,
				Holder: []string{"", "h1", "host:2"}[rng.IntN(3)]}
			b := time.Now()
			ls, _ := f.claim(p)
			leases = append(leases, m.claim(f, ls, p, b, time.Now(), where)...)
		case r < 88:
			i := rng.IntN(len(leases))
			l := leases[i]
			leases = slices.Delete(leases, i, i+1)
			o := store.Outcome{
				Kind:  []store.OutcomeKind{store.Ack, store.Ack, store.Ack, store.Drop, store.Retry, store.Retry, store.Retry, store.Defer, store.Defer, store.Hold}[rng.IntN(10)],
				After: []time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 0, hour}[rng.IntN(10)],
				Err:   []string{"", fmt.Sprint("e", op)}[rng.IntN(2)],
			}
			b := time.Now()
			more := f.finish(l, o)
			m.finish(f, l, o, more, b, time.Now(), where)
		default:
			name := universe[rng.IntN(len(universe))]
			b := time.Now()
			ok, err := f.s.Release(f.ctx, f.q, name)
			require.NoError(f.t, err)
			m.release(f, name, ok, b, time.Now(), where)
		}
		m.check(f, in, rng, universe, dead, op%4 == 0, where)
	}
}

// add is an Add of vals to name with p, between b and a.
func (m *imodel) add(name string, vals []string, p store.AddParams, b, a time.Time) {
	k := m.keys[name]
	fresh := k == nil
	if fresh {
		k = &ikey{}
		m.keys[name] = k
	}
	first := len(k.vals)
	k.vals = append(k.vals, vals...)
	if p.Wait == 0 {
		k.burst = 0
	} else {
		k.burst += len(vals)
		k.wait, k.maxWait = p.Wait, p.MaxWait
	}
	if !fresh && k.state != store.Debouncing {
		return // it keeps its state; the values wait behind
	}
	if k.ready() > 0 {
		m.becomeReady(name, k, first, b, a)
		return
	}
	k.enter(store.Debouncing, b, a)
}

// claim checks the leases of a Claim with p made between b and a, and
// takes them.
func (m *imodel) claim(f *fixture, ls []store.Lease, p store.ClaimParams, b, a time.Time, where string) []store.Lease {
	f.t.Helper()
	want := m.order[:min(p.Keys, len(m.order))]
	require.Equal(f.t, want, keysOf(ls), "%s: Claim leases the keys ready first", where)
	m.order = slices.Clone(m.order[len(want):])
	for _, l := range ls {
		k := m.keys[l.Key]
		n := k.batch
		if n == 0 {
			n = k.ready()
			if p.MaxBatch > 0 {
				n = min(n, p.MaxBatch)
			}
		}
		f.values(l, l.Key, k.vals[:n]...)
		next := k.attempt
		if k.retried || next == 0 {
			next++
		}
		require.Equal(f.t, next, l.Attempt, "%s: Attempt of key %q", where, l.Key)
		require.Greater(f.t, l.Fence, m.fence, "%s: Fence of key %q", where, l.Key)
		m.fence = l.Fence
		k.batch, k.attempt, k.retried, k.fence, k.holder, k.lease = n, l.Attempt, false, l.Fence, p.Holder, l
		k.enter(store.Leased, b, a)
	}
	return ls
}

// finish is the Finish of l with o, between b and a, which returned more.
func (m *imodel) finish(f *fixture, l store.Lease, o store.Outcome, more bool, b, a time.Time, where string) {
	f.t.Helper()
	k := m.keys[l.Key]
	require.Equal(f.t, store.Leased, k.state)
	k.holder = ""
	switch o.Kind {
	case store.Ack, store.Drop:
		if o.Kind == store.Drop {
			m.dead++
		}
		k.vals = k.vals[k.batch:]
		k.batch, k.attempt, k.retried, k.err = 0, 0, false, ""
		switch {
		case len(k.vals) == 0:
			delete(m.keys, l.Key)
		case k.ready() > 0:
			m.becomeReady(l.Key, k, -1, b, a)
		default:
			k.enter(store.Debouncing, b, a)
		}
	case store.Retry, store.Defer:
		k.retried = o.Kind == store.Retry
		if k.retried {
			k.err = o.Err
		}
		switch {
		case o.After == 0:
			m.becomeReady(l.Key, k, -1, b, a)
		case k.retried:
			k.enter(store.Retrying, b.Add(o.After), a.Add(o.After))
		default:
			k.enter(store.Deferred, b.Add(o.After), a.Add(o.After))
		}
	case store.Hold:
		k.err = o.Err
		k.enter(store.Held, b, a)
	}
	require.Equal(f.t, m.keys[l.Key] != nil, more, "%s: Finish's more", where)
}

// release is a Release of name, between b and a, which returned ok.
func (m *imodel) release(f *fixture, name string, ok bool, b, a time.Time, where string) {
	f.t.Helper()
	k := m.keys[name]
	held := k != nil && k.state == store.Held
	require.Equal(f.t, held, ok, "%s: Release of key %q", where, name)
	if held {
		k.batch, k.attempt, k.retried, k.err = 0, 0, false, ""
		m.becomeReady(name, k, -1, b, a)
	}
}

// check reads every key of the universe, with a walk, Key and Values, and
// checks them against the model, and Stats; with queues, Queues too, and
// walks with random filters.
func (m *imodel) check(f *fixture, in store.Inspector, rng *rand.Rand, universe []string, dead, queues bool, where string) {
	f.t.Helper()
	most := len(universe) + 2
	shown := f.once(f.walk(in, f.q, store.KeyQuery{Limit: 1 + rng.IntN(4)}, most, nil))
	require.Equal(f.t, sorted(slices.Collect(maps.Keys(m.keys))), keysIn(shown), "%s: the keys a walk shows", where)
	for _, name := range universe {
		k := m.keys[name]
		if k == nil {
			f.noKey(in, f.q, name)
			continue
		}
		info := f.keyInfo(in, name)
		require.Zero(f.t, shown[name].Ahead, "%s: Ahead of key %q in a page", where, name)
		sameInfo(f, info, shown[name], "%s: key %q in a page and from Key", where, name)
		vs := f.storedValues(in, f.q, name, 100)
		require.Equal(f.t, k.vals, strs(valuesOf(vs)), "%s: Values of key %q", where, name)
		for i := 1; i < len(vs); i++ {
			require.False(f.t, vs[i].Added.Before(vs[i-1].Added), "%s: values of key %q added out of order", where, name)
		}
		m.checkKey(f, name, k, info, vs, where)
	}
	want := m.stats(dead)
	require.Equal(f.t, want, f.stats(), "%s: Stats", where)
	if !queues {
		return
	}
	qs, err := in.Queues(f.ctx)
	require.NoError(f.t, err)
	i := slices.IndexFunc(qs, func(q store.QueueInfo) bool { return q.Name == f.q })
	require.Equal(f.t, want != store.Stats{}, i >= 0, "%s: Queues lists the queue while it holds values or dead letters", where)
	if i >= 0 {
		require.Equal(f.t, want, qs[i].Stats, "%s: Stats from Queues", where)
		var oldest time.Time
		if len(m.order) > 0 {
			oldest = f.storedValues(in, f.q, m.order[0], 1)[0].Added
		}
		sameTime(f, oldest, qs[i].Oldest, "%s: Oldest of the queue, whose first ready key is %q", where, m.order)
	}
	states := []store.KeyState{0, store.Ready, store.Debouncing, store.Leased, store.Retrying, store.Held, store.Deferred}
	q := store.KeyQuery{State: states[rng.IntN(len(states))], Prefix: []string{"", "", "a", "b%", "\xff", "e:", "x"}[rng.IntN(7)], Limit: 1 + rng.IntN(3)}
	var keys []string
	for name, k := range m.keys {
		if strings.HasPrefix(name, q.Prefix) && (q.State == 0 || k.state == q.State) {
			keys = append(keys, name)
		}
	}
	require.Equal(f.t, sorted(keys), keysIn(f.once(f.walk(in, f.q, q, most, nil))), "%s: a walk with %+v", where, q)
}

// checkKey checks what key name, k in the model, showed.
func (m *imodel) checkKey(f *fixture, name string, k *ikey, info store.KeyInfo, vs []store.StoredValue, where string) {
	f.t.Helper()
	want := store.KeyInfo{Key: name, State: k.state, Attempt: k.attempt, Fence: k.fence, Err: k.err, Values: len(k.vals)}
	if k.state == store.Ready {
		want.Ahead = slices.Index(m.order, name) // the keys a Claim leases first
	}
	var at time.Time // the state's time: Since, or Until
	switch k.state {
	case store.Debouncing:
		last, first := vs[len(vs)-1].Added, vs[len(vs)-k.burst].Added
		want.Until = last.Add(k.wait)
		if k.maxWait > 0 && first.Add(k.maxWait).Before(want.Until) {
			want.Until, want.MaxWait = first.Add(k.maxWait), true
		}
		sameTime(f, want.Until, info.Until, "%s: Until of debouncing key %q", where, name)
	case store.Leased:
		want.Since, want.Until, want.Holder = k.lo, k.lo, k.holder
		sameTime(f, info.Since.Add(time.Hour), info.Until, "%s: Until of leased key %q, its TTL after its Since", where, name)
		at = info.Since
	case store.Ready, store.Held:
		want.Since = k.lo
		at = info.Since
	case store.Retrying, store.Deferred:
		want.Until = k.lo
		at = info.Until
	}
	f.sameBut(want, info, "%s: key %q", where, name)
	require.Equal(f.t, want.Ahead, info.Ahead, "%s: Ahead of key %q, in the ready order %q", where, name, m.order)
	if at.IsZero() {
		return
	}
	if k.sinceAt >= 0 {
		sameTime(f, vs[k.sinceAt].Added, at, "%s: Since of key %q, the Add that made it ready", where, name)
	} else {
		f.between(at, k.lo, k.hi, "%s: the time of key %q, %v", where, name, k.state)
	}
	if k.seen.State != 0 {
		sameTime(f, k.seen.Since, info.Since, "%s: Since of key %q moved while it stayed %v", where, name, k.state)
		sameTime(f, k.seen.Until, info.Until, "%s: Until of key %q moved while it stayed %v", where, name, k.state)
	}
	k.seen = info
}

// stats returns the model's Stats.
func (m *imodel) stats(dead bool) store.Stats {
	var s store.Stats
	for _, k := range m.keys {
		s.Values += len(k.vals)
		s.Keys++
		if k.burst > 0 {
			s.Pending++
		}
		switch k.state {
		case store.Ready:
			s.Ready++
		case store.Leased:
			s.Leased++
		case store.Retrying:
			s.Retrying++
			s.Behind += len(k.vals) - k.batch
		case store.Held:
			s.Held++
			s.HeldValues += len(k.vals)
		}
	}
	if dead {
		s.Dead = m.dead
	}
	return s
}
