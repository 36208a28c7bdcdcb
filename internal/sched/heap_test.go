package sched

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeapModel pushes and pops at random and checks every pop against a
// sorted reference list ordered by (deadline, push order).
func TestHeapModel(t *testing.T) {
	type ref struct {
		at  int64
		seq int
		key int
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var h Heap[int]
	var model []ref
	seq := 0
	for range 20000 {
		if rng.IntN(3) > 0 {
			seq++
			at := int64(rng.IntN(50))
			earliest := h.Push(seq, at)
			wantEarliest := true
			for _, r := range model {
				if r.at <= at {
					wantEarliest = false
				}
			}
			require.Equal(t, wantEarliest, earliest)
			model = append(model, ref{at, seq, seq})
			continue
		}
		key, at, ok := h.Pop()
		require.Equal(t, len(model) > 0, ok)
		if !ok {
			continue
		}
		i := 0
		for j, r := range model {
			if r.at < model[i].at || (r.at == model[i].at && r.seq < model[i].seq) {
				i = j
			}
		}
		require.Equal(t, model[i].key, key)
		require.Equal(t, model[i].at, at)
		model = slices.Delete(model, i, i+1)
		require.Equal(t, len(model), h.Len())
	}
}

// TestHeapWalk walks heaps of random deadlines with a visit that descends
// only below the entries before a bound: it sees exactly those entries,
// and reads at most as many more plus one.
func TestHeapWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 10, 1000} {
		var h Heap[int]
		ats := make([]int64, n)
		for i := range n {
			ats[i] = int64(rng.IntN(100))
			h.Push(i, ats[i])
		}
		for range 10 {
			h.Pop()
			h.Push(n, int64(rng.IntN(100)))
			for _, bound := range []int64{-1, 0, 1, 50, 99, 100} {
				var want, got []int
				for _, it := range h.items {
					if it.at < bound {
						want = append(want, it.key)
					}
				}
				visits := 0
				h.Walk(func(key int, at int64) bool {
					visits++
					if at >= bound {
						return false
					}
					got = append(got, key)
					return true
				})
				slices.Sort(want)
				slices.Sort(got)
				require.Equal(t, want, got, "n %d, bound %d", n, bound)
				require.LessOrEqual(t, visits, 2*len(want)+1, "n %d, bound %d", n, bound)
			}
		}
	}
}
