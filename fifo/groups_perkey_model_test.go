package fifo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// perKeyModel is the reference for a Groups with PerKey > 1: each key a
// list of its messages and of its batches, in order, out or kept.
type perKeyModel struct {
	perKey, maxBatch int
	now              time.Duration
	keys             map[int]*perKeyKey
}

type perKeyKey struct {
	msgs []int // in Put order, those of the batches first
	runs []perKeyRun
	held bool
}

type perKeyRun struct {
	id      int // the model's name of the batch, to find it again
	vals    []int
	out     bool
	attempt int
	due     time.Duration // kept: ready from then on
	retry   bool
}

func (k *perKeyKey) outs() int {
	n := 0
	for _, r := range k.runs {
		if r.out {
			n++
		}
	}
	return n
}

func (k *perKeyKey) inRuns() int {
	n := 0
	for _, r := range k.runs {
		n += len(r.vals)
	}
	return n
}

func (k *perKeyKey) free() []int { return k.msgs[k.inRuns():] }

func (k *perKeyKey) kept() int {
	for i, r := range k.runs {
		if !r.out {
			return i
		}
	}
	return -1
}

// eligible reports whether key k may be leased now.
func (m *perKeyModel) eligible(k *perKeyKey) bool {
	if k.held || k.outs() >= m.perKey {
		return false
	}
	if i := k.kept(); i >= 0 {
		return k.runs[i].due <= m.now
	}
	return len(k.free()) > 0
}

// delayed reports whether k waits for the delay of its first kept batch.
func (m *perKeyModel) delayed(k *perKeyKey) (delayed, retry bool) {
	if k.held || k.outs() >= m.perKey {
		return false, false
	}
	if i := k.kept(); i >= 0 && k.runs[i].due > m.now {
		return true, k.runs[i].retry
	}
	return false, false
}

// next is the batch key k's next lease takes, as a run not yet out.
func (m *perKeyModel) next(k *perKeyKey, id int) int {
	if i := k.kept(); i >= 0 {
		return i
	}
	free := k.free()
	n := len(free)
	if m.maxBatch > 0 {
		n = min(n, m.maxBatch)
	}
	k.runs = append(k.runs, perKeyRun{id: id, vals: slices.Clone(free[:n]), attempt: 1})
	return len(k.runs) - 1
}

func (k *perKeyKey) find(id int) int {
	for i, r := range k.runs {
		if r.id == id {
			return i
		}
	}
	panic("no such batch")
}

// cut removes run i and its values.
func (k *perKeyKey) cut(i int) {
	off := 0
	for _, r := range k.runs[:i] {
		off += len(r.vals)
	}
	k.msgs = slices.Delete(k.msgs, off, off+len(k.runs[i].vals))
	k.runs = slices.Delete(k.runs, i, i+1)
}

type outLease struct {
	l  Lease[int, int]
	id int
}

// TestGroupsPerKeyModel drives Groups with PerKey > 1 with random
// operations and holds it to the model: every lease is the batch the
// model says its key leases next, Get hands one out exactly when the model
// has a key ready, and the counts, Key and Close's take agree.
func TestGroupsPerKeyModel(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { runPerKeyModel(t, seed) })
		})
	}
}

func runPerKeyModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	m := &perKeyModel{perKey: 2 + rng.IntN(2), maxBatch: rng.IntN(3), keys: map[int]*perKeyKey{}}
	g, err := NewGroups[int, int](GroupsConfig{PerKey: m.perKey, MaxBatch: m.maxBatch})
	require.NoError(t, err)
	ctx := context.Background()
	var out []outLease
	next, ids := 0, 0
	delays := []time.Duration{0, time.Second, 3 * time.Second}
	for step := range 300 {
		switch op := rng.IntN(10); {
		case op < 3: // Put
			k := rng.IntN(3)
			var vs []int
			for range 1 + rng.IntN(3) {
				next++
				vs = append(vs, next)
			}
			require.NoError(t, g.Put(k, vs...))
			mk := m.keys[k]
			if mk == nil {
				mk = &perKeyKey{}
				m.keys[k] = mk
			}
			mk.msgs = append(mk.msgs, vs...)
		case op < 5: // Get
			ready := false
			for _, mk := range m.keys {
				ready = ready || m.eligible(mk)
			}
			if !ready {
				cctx, cancel := context.WithCancel(ctx)
				errc := make(chan error, 1)
				go func() {
					l, err := g.Get(cctx)
					if err == nil {
						err = fmt.Errorf("leased %v of %d though no key is ready", l.Messages, l.Key)
					}
					errc <- err
				}()
				synctest.Wait()
				cancel()
				require.ErrorIs(t, <-errc, context.Canceled, "step %d", step)
				continue
			}
			l, err := g.Get(ctx)
			require.NoError(t, err)
			mk := m.keys[l.Key]
			require.True(t, m.eligible(mk), "step %d: key %d leased though not ready", step, l.Key)
			ids++
			i := m.next(mk, ids)
			r := &mk.runs[i]
			require.Equal(t, r.vals, l.Messages, "step %d: batch of key %d", step, l.Key)
			require.Equal(t, r.attempt, l.Attempt, "step %d", step)
			r.out, r.due = true, 0
			out = append(out, outLease{l, r.id})
		case op < 8 && len(out) > 0: // end a lease
			j := rng.IntN(len(out))
			ol := out[j]
			out = slices.Delete(out, j, j+1)
			mk := m.keys[ol.l.Key]
			i := mk.find(ol.id)
			r := &mk.runs[i]
			r.out = false
			switch rng.IntN(5) {
			case 0:
				mk.cut(i)
				require.Equal(t, len(mk.msgs) > 0, g.Ack(ol.l))
			case 1:
				mk.cut(i)
				require.Equal(t, len(mk.msgs) > 0, g.Drop(ol.l))
			case 2:
				d := delays[rng.IntN(len(delays))]
				r.attempt++
				r.retry, r.due = true, m.now+d
				g.Retry(ol.l, d)
			case 3:
				d := delays[rng.IntN(len(delays))]
				r.retry, r.due = false, m.now+d
				g.Defer(ol.l, d)
			case 4:
				r.retry, r.due = false, 0
				mk.held = true
				g.Hold(ol.l)
			}
			if len(mk.msgs) == 0 && len(mk.runs) == 0 {
				delete(m.keys, ol.l.Key)
			}
		case op == 8: // Release
			k := rng.IntN(3)
			mk := m.keys[k]
			want := mk != nil && mk.held
			require.Equal(t, want, g.Release(k), "step %d", step)
			if want {
				mk.held = false
				last := -1
				for i, r := range mk.runs {
					if r.out {
						last = i
					}
				}
				mk.runs = mk.runs[:last+1]
				for i := range mk.runs {
					if r := &mk.runs[i]; !r.out {
						r.attempt, r.due, r.retry = 1, 0, false
					}
				}
			}
		default: // time passes
			time.Sleep(time.Second)
			synctest.Wait()
			m.now += time.Second
		}
		checkPerKeyModel(t, m, g, len(out), step)
	}
	// Close takes every message not out on a lease, in order; the leases
	// out end afterwards, a Retry handing its batch back too.
	left := map[int][]int{}
	g.Close(func(key int, msgs []int) { left[key] = append(left[key], msgs...) })
	want := map[int][]int{}
	for k, mk := range m.keys {
		off := 0
		for _, r := range mk.runs {
			if !r.out {
				want[k] = append(want[k], r.vals...)
			}
			off += len(r.vals)
		}
		want[k] = append(want[k], mk.msgs[off:]...)
		if len(want[k]) == 0 {
			delete(want, k)
		}
	}
	require.Equal(t, want, left)
	for i, ol := range out {
		if i%2 == 0 {
			g.Retry(ol.l, time.Second)
			want[ol.l.Key] = append(want[ol.l.Key], ol.l.Messages...)
		} else {
			g.Ack(ol.l)
		}
	}
	require.Equal(t, want, left)
	require.Zero(t, g.Stats().Messages)
	require.Zero(t, g.Keys())
}

func checkPerKeyModel(t *testing.T, m *perKeyModel, g *Groups[int, int], leases, step int) {
	t.Helper()
	var want GroupsStats
	want.Leases = leases
	want.Keys = len(m.keys)
	for k, mk := range m.keys {
		want.Messages += len(mk.msgs)
		outVals := 0
		for _, r := range mk.runs {
			if r.out {
				outVals += len(r.vals)
			}
		}
		want.Waiting += len(mk.msgs) - outVals
		if mk.held {
			want.Held++
			want.HeldMessages += len(mk.msgs)
		}
		if d, r := m.delayed(mk); d {
			want.Delayed++
			if r {
				want.Retrying++
				want.BehindRetrying += len(mk.free())
			}
		}
		info, ok := g.Key(k, 10)
		require.True(t, ok, "step %d: key %d", step, k)
		require.Equal(t, mk.outs(), info.Leases, "step %d: key %d", step, k)
		require.Equal(t, len(mk.msgs), info.Messages, "step %d: key %d", step, k)
		if mk.held {
			require.Equal(t, KeyHeld, info.State, "step %d: key %d", step, k)
		} else if mk.outs() > 0 {
			require.Equal(t, KeyLeased, info.State, "step %d: key %d", step, k)
		}
	}
	require.Equal(t, want, g.Stats(), "step %d", step)
}
