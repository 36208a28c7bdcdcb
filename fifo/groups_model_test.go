package fifo

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// groupsModel is the reference for Groups, driven by one goroutine.
type groupsModel struct {
	maxBatch int
	keys     map[int]*modelGroup
	ready    []int
	seq      int64
	now      int64
	shut     bool
	closed   bool
	left     map[int][]int // handed back by Close
}

type modelGroup struct {
	msgs    []int
	leased  int
	attempt int
	batch   int // size of the retried or deferred lease to hand out again; 0 if none
	state   groupState
	retried bool     // delayed by a Retry, not a Defer
	due     [2]int64 // deadline and push order while delayed
}

func (m *groupsModel) put(k int, msgs []int) error {
	if m.shut {
		return ErrClosed
	}
	g := m.keys[k]
	if g == nil {
		g = &modelGroup{attempt: 1}
		m.keys[k] = g
		m.ready = append(m.ready, k)
	}
	g.msgs = append(g.msgs, msgs...)
	return nil
}

func (m *groupsModel) get() (int, []int, int) {
	k := m.ready[0]
	m.ready = m.ready[1:]
	g := m.keys[k]
	switch {
	case g.batch > 0:
		g.leased = g.batch // exactly the messages of the lease retried
	case m.maxBatch > 0:
		g.leased = min(len(g.msgs), m.maxBatch)
	default:
		g.leased = len(g.msgs)
	}
	g.state = stateLeased
	return k, slices.Clone(g.msgs[:g.leased]), g.attempt
}

// remove models Ack and Drop and returns what they report.
func (m *groupsModel) remove(k int) (more bool) {
	g := m.keys[k]
	g.msgs = g.msgs[g.leased:]
	g.leased, g.attempt, g.batch = 0, 1, 0
	if len(g.msgs) == 0 {
		delete(m.keys, k)
		return false
	}
	if m.handBack(k) {
		return false
	}
	g.state = stateReady
	m.ready = append(m.ready, k)
	return true
}

// handBack models a lease ending after Close.
func (m *groupsModel) handBack(k int) bool {
	if !m.closed {
		return false
	}
	m.left[k] = append(m.left[k], m.keys[k].msgs...)
	delete(m.keys, k)
	return true
}

// retry models Retry (tries 1) and Defer (tries 0).
func (m *groupsModel) retry(k int, d time.Duration, tries int) {
	g := m.keys[k]
	g.batch, g.leased = g.leased, 0
	g.attempt += tries
	if m.handBack(k) {
		return
	}
	if d <= 0 {
		g.state = stateReady
		m.ready = append(m.ready, k)
		return
	}
	g.state = stateDelayed
	g.retried = tries > 0
	m.seq++
	g.due = [2]int64{m.now + int64(d), m.seq}
}

func (m *groupsModel) hold(k int) {
	g := m.keys[k]
	g.leased = 0
	if !m.handBack(k) {
		g.state = stateHeld
	}
}

func (m *groupsModel) close() {
	m.shut, m.closed = true, true
	for k, g := range m.keys {
		if g.state != stateLeased {
			m.left[k] = append(m.left[k], g.msgs...)
			delete(m.keys, k)
		}
	}
	m.ready = nil
}

func (m *groupsModel) advance(d time.Duration) {
	m.now += int64(d)
	var due []int
	for k, g := range m.keys {
		if g.state == stateDelayed && g.due[0] <= m.now {
			due = append(due, k)
		}
	}
	slices.SortFunc(due, func(a, b int) int {
		da, db := m.keys[a].due, m.keys[b].due
		return cmp.Or(cmp.Compare(da[0], db[0]), cmp.Compare(da[1], db[1]))
	})
	for _, k := range due {
		m.keys[k].state, m.keys[k].retried = stateReady, false
		m.ready = append(m.ready, k)
	}
}

func (m *groupsModel) stats() (s GroupsStats, held []int) {
	s.Keys = len(m.keys)
	for k, g := range m.keys {
		s.Messages += len(g.msgs)
		s.Waiting += len(g.msgs) - g.leased
		switch g.state {
		case stateLeased:
			s.Leases++
		case stateDelayed:
			s.Delayed++
			if g.retried {
				s.Retrying++
				s.BehindRetrying += len(g.msgs) - g.batch
			}
		case stateHeld:
			s.Held++
			s.HeldMessages += len(g.msgs)
			held = append(held, k)
		}
	}
	slices.Sort(held)
	return s, held
}

// TestGroupsModel runs random operation sequences, with retries and defers
// on fake time, holds, releases, a shutdown part-way and a Close near the
// end, against groupsModel, for MaxBatch 0, 1 and 2. A retried or deferred
// lease comes back with exactly its messages, whatever MaxBatch; a released
// one takes what is waiting. Delays keep firing after shutdown; Close hands
// back everything not leased at once and the rest as its leases end.
func TestGroupsModel(t *testing.T) {
	for seed := range uint64(60) {
		synctest.Test(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			maxBatch := int(seed % 3)
			g, err := NewGroups[int, int](GroupsConfig{MaxBatch: maxBatch})
			require.NoError(t, err)
			m := &groupsModel{maxBatch: maxBatch, keys: map[int]*modelGroup{}, left: map[int][]int{}}
			left := map[int][]int{}
			collect := func(k int, msgs []int) {
				if maxBatch > 0 {
					require.LessOrEqual(t, len(msgs), maxBatch, "Close hands back lease-sized batches")
				}
				left[k] = append(left[k], msgs...)
			}
			defer g.Close(collect)
			leases := map[int]Lease[int, int]{}
			var ended []Lease[int, int]
			next := 0
			pick := func() (Lease[int, int], bool) {
				ks := make([]int, 0, len(leases))
				for k := range leases {
					ks = append(ks, k)
				}
				if len(ks) == 0 {
					return Lease[int, int]{}, false
				}
				slices.Sort(ks)
				l := leases[ks[rng.IntN(len(ks))]]
				delete(leases, l.Key)
				ended = append(ended, l)
				return l, true
			}
			for step := range 400 {
				k := rng.IntN(5)
				switch op := rng.IntN(100); {
				case op < 25:
					msgs := make([]int, 1+rng.IntN(3))
					for i := range msgs {
						next++
						msgs[i] = next
					}
					require.Equal(t, m.put(k, msgs), g.Put(k, msgs...), "step %d", step)
				case op < 50:
					checkGroupsGet(t, g, m, leases, step)
				case op < 62:
					if l, ok := pick(); ok {
						more := g.Ack(l)
						require.Equal(t, m.remove(l.Key), more, "step %d: Ack", step)
					}
				case op < 67:
					if l, ok := pick(); ok {
						more := g.Drop(l)
						require.Equal(t, m.remove(l.Key), more, "step %d: Drop", step)
					}
				case op < 77:
					if l, ok := pick(); ok {
						d := time.Duration(rng.IntN(3)) * time.Second
						if rng.IntN(3) == 0 {
							g.Defer(l, d)
							m.retry(l.Key, d, 0)
						} else {
							g.Retry(l, d)
							m.retry(l.Key, d, 1)
						}
					}
				case op < 81:
					if l, ok := pick(); ok {
						g.Hold(l)
						m.hold(l.Key)
					}
				case op < 86:
					mg := m.keys[k]
					want := mg != nil && mg.state == stateHeld
					require.Equal(t, want, g.Release(k), "step %d: Release(%d)", step, k)
					if want {
						mg.attempt, mg.batch = 1, 0
						mg.state = stateReady
						m.ready = append(m.ready, k)
					}
				case op < 95:
					d := time.Duration(rng.IntN(2500)) * time.Millisecond
					time.Sleep(d)
					synctest.Wait()
					m.advance(d)
				case op < 97:
					if len(ended) > 0 {
						l := ended[rng.IntN(len(ended))]
						require.Panics(t, func() { g.Ack(l) }, "step %d: stale lease", step)
					}
				case op < 99:
					if step > 200 {
						g.ShutDown()
						m.shut = true
					}
				default:
					if step > 300 {
						g.Close(collect)
						m.close()
					}
				}
				want, held := m.stats()
				require.Equal(t, want, g.Stats(), "step %d: Stats", step)
				require.Equal(t, want.Waiting, g.Len(), "step %d: Len", step)
				require.Equal(t, want.Leases, g.Leased(), "step %d: Leased", step)
				require.Equal(t, want.Keys, g.Keys(), "step %d: Keys", step)
				gotHeld := g.Held()
				slices.Sort(gotHeld)
				require.Equal(t, held, gotHeld, "step %d: Held", step)
				require.Equal(t, m.left, left, "step %d: handed back by Close", step)
			}
			// Close takes back everything left, and the leases still out
			// hand back what is behind them.
			g.Close(collect)
			m.close()
			for k, l := range leases {
				g.Ack(l)
				m.remove(k)
			}
			require.Zero(t, g.Keys())
			require.Empty(t, m.keys)
			require.Equal(t, m.left, left)
		})
	}
}

func checkGroupsGet(t *testing.T, g *Groups[int, int], m *groupsModel, leases map[int]Lease[int, int], step int) {
	t.Helper()
	if len(m.ready) > 0 {
		l, err := g.Get(context.Background())
		require.NoError(t, err)
		k, msgs, attempt := m.get()
		require.Equal(t, k, l.Key, "step %d: Get key", step)
		require.Equal(t, msgs, l.Messages, "step %d: Get messages", step)
		require.Equal(t, attempt, l.Attempt, "step %d: Get attempt", step)
		leases[k] = l
		return
	}
	delayed := false
	for _, mg := range m.keys {
		delayed = delayed || mg.state == stateDelayed
	}
	if m.shut && !delayed {
		_, err := g.Get(context.Background())
		require.ErrorIs(t, err, ErrClosed, "step %d", step)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := g.Get(ctx)
		errc <- err
	}()
	synctest.Wait()
	select {
	case err := <-errc:
		t.Fatalf("step %d: Get returned %v with no key ready", step, err)
	default:
	}
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)
}
