package store

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// A fenwick tree grown by push, changed by add and rebuilt of ones sums
// and finds as counting the counts one by one does.
func TestFenwick(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var counts []int
	var tree fenwick
	check := func() {
		for i := 0; i <= len(counts); i++ {
			s := 0
			for _, c := range counts[:i] {
				s += c
			}
			require.Equal(t, s, tree.sum(i), "sum below %d of %v", i, counts)
		}
		s := 0
		for i, c := range counts {
			s += c
			if c > 0 {
				require.Equal(t, i, tree.find(s), "find %d in %v", s, counts)
			}
		}
		require.Equal(t, len(counts), tree.find(s+1), "find past the sum of %v", counts)
	}
	check()
	for range 300 {
		switch r.IntN(4) {
		case 0:
			if len(counts) > 0 {
				i := r.IntN(len(counts))
				if counts[i] > 0 {
					counts[i]--
					tree.add(i, -1)
				}
			}
		case 1:
			if r.IntN(20) == 0 {
				for i := range counts {
					counts[i] = 1
				}
				tree = newFenwickOfOnes(len(counts))
			}
		default:
			v := r.IntN(3)
			counts = append(counts, v)
			tree.push(v)
		}
		check()
	}
}

// keyOrder walks the live keys in the order they were added, from any
// seq, while keys come and go at random, and holds at most about twice
// the live keys.
func TestKeyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var o keyOrder
	var live []*key // in the order added
	for step := range 5000 {
		if len(live) > 0 && r.IntN(5) < 2+step/2000 {
			// Mostly the oldest keys, as a queue leases them.
			i := min(r.IntN(len(live)), r.IntN(len(live)))
			o.remove(live[i])
			live = append(live[:i], live[i+1:]...)
		} else {
			k := &key{}
			o.add(k)
			live = append(live, k)
		}
		require.Equal(t, len(live), o.n)
		require.LessOrEqual(t, len(o.entries), 2*len(live)+1, "entries kept with %d live keys", len(live))
		if step%50 != 0 {
			continue
		}
		for _, from := range []uint64{0, o.last / 2, o.last} {
			var want, got []*key
			for _, k := range live {
				if k.seq > from {
					want = append(want, k)
				}
			}
			for i := o.next(o.after(from)); i < len(o.entries); i = o.next(i + 1) {
				got = append(got, o.entries[i].k)
			}
			require.Equal(t, want, got, "step %d, from %d", step, from)
		}
	}
}
