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
}

type modelGroup struct {
	msgs    []int
	leased  int
	attempt int
	state   groupState
	due     [2]int64 // deadline and push order while delayed
	pushed  bool     // the delay has a timer (false after shutdown)
}

func (m *groupsModel) put(k int, msgs []int) error {
	if m.shut {
		return ErrShutDown
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
	g.leased = len(g.msgs)
	if m.maxBatch > 0 {
		g.leased = min(g.leased, m.maxBatch)
	}
	g.state = stateLeased
	return k, slices.Clone(g.msgs[:g.leased]), g.attempt
}

func (m *groupsModel) remove(k int) {
	g := m.keys[k]
	g.msgs = g.msgs[g.leased:]
	g.leased, g.attempt = 0, 1
	if len(g.msgs) == 0 {
		delete(m.keys, k)
		return
	}
	g.state = stateReady
	m.ready = append(m.ready, k)
}

func (m *groupsModel) retry(k int, d time.Duration) {
	g := m.keys[k]
	g.leased = 0
	g.attempt++
	if d <= 0 {
		g.state = stateReady
		m.ready = append(m.ready, k)
		return
	}
	g.state = stateDelayed
	g.pushed = !m.shut
	m.seq++
	g.due = [2]int64{m.now + int64(d), m.seq}
}

func (m *groupsModel) advance(d time.Duration) {
	m.now += int64(d)
	if m.shut {
		return
	}
	var due []int
	for k, g := range m.keys {
		if g.state == stateDelayed && g.pushed && g.due[0] <= m.now {
			due = append(due, k)
		}
	}
	slices.SortFunc(due, func(a, b int) int {
		da, db := m.keys[a].due, m.keys[b].due
		return cmp.Or(cmp.Compare(da[0], db[0]), cmp.Compare(da[1], db[1]))
	})
	for _, k := range due {
		m.keys[k].state = stateReady
		m.ready = append(m.ready, k)
	}
}

func (m *groupsModel) counts() (waiting, leases int, held []int) {
	for k, g := range m.keys {
		waiting += len(g.msgs) - g.leased
		if g.state == stateLeased {
			leases++
		}
		if g.state == stateHeld {
			held = append(held, k)
		}
	}
	slices.Sort(held)
	return waiting, leases, held
}

// TestGroupsModel runs random operation sequences, with retries on fake
// time, holds, releases and a shutdown part-way, against groupsModel, for
// MaxBatch 0, 1 and 2.
func TestGroupsModel(t *testing.T) {
	for seed := range uint64(60) {
		synctest.Test(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 11))
			maxBatch := int(seed % 3)
			g, err := NewGroups[int, int](GroupsConfig{MaxBatch: maxBatch})
			require.NoError(t, err)
			defer g.ShutDown()
			m := &groupsModel{maxBatch: maxBatch, keys: map[int]*modelGroup{}}
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
						g.Ack(l)
						m.remove(l.Key)
					}
				case op < 67:
					if l, ok := pick(); ok {
						g.Drop(l)
						m.remove(l.Key)
					}
				case op < 77:
					if l, ok := pick(); ok {
						d := time.Duration(rng.IntN(3)) * time.Second
						g.Retry(l, d)
						m.retry(l.Key, d)
					}
				case op < 81:
					if l, ok := pick(); ok {
						g.Hold(l)
						m.keys[l.Key].state = stateHeld
						m.keys[l.Key].leased = 0
					}
				case op < 86:
					mg := m.keys[k]
					want := mg != nil && mg.state == stateHeld
					require.Equal(t, want, g.Release(k), "step %d: Release(%d)", step, k)
					if want {
						mg.attempt = 1
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
				default:
					if step > 200 {
						g.ShutDown()
						m.shut = true
					}
				}
				waiting, leased, held := m.counts()
				require.Equal(t, waiting, g.Len(), "step %d: Len", step)
				require.Equal(t, leased, g.Leased(), "step %d: Leased", step)
				require.Equal(t, len(m.keys), g.Keys(), "step %d: Keys", step)
				gotHeld := g.Held()
				slices.Sort(gotHeld)
				require.Equal(t, held, gotHeld, "step %d: Held", step)
			}
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
	if m.shut {
		_, err := g.Get(context.Background())
		require.ErrorIs(t, err, ErrShutDown, "step %d", step)
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
