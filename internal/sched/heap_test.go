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
