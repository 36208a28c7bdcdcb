package store

import "math/bits"

// fenwick is a Fenwick (binary indexed) tree of counts, one per index from
// 0, that grows at its end: the count of index i is added into the nodes
// p = i+1, p + lowbit(p), ..., node p holding the sum of the counts of the
// indexes p-lowbit(p) to p-1. Sums, updates and appends cost O(log n).
type fenwick []int

// newFenwickOfOnes returns the tree of n counts of 1: node p holds
// lowbit(p).
func newFenwickOfOnes(n int) fenwick {
	t := make(fenwick, n)
	for p := 1; p <= n; p++ {
		t[p-1] = p & -p
	}
	return t
}

// push appends an index of count v.
func (t *fenwick) push(v int) {
	p := len(*t) + 1
	// Node p also holds the indexes p-lowbit(p) to p-2: the nodes that
	// cover them, from p-1 down.
	for c := p - 1; c > p-(p&-p); c -= c & -c {
		v += (*t)[c-1]
	}
	*t = append(*t, v)
}

// add adds v to the count of index i.
func (t fenwick) add(i, v int) {
	for p := i + 1; p <= len(t); p += p & -p {
		t[p-1] += v
	}
}

// sum returns the sum of the counts of the indexes below i.
func (t fenwick) sum(i int) int {
	s := 0
	for p := i; p > 0; p -= p & -p {
		s += t[p-1]
	}
	return s
}

// find returns the least index i whose counts up to i, included, sum to c
// or more, with c >= 1 and counts that are never negative; len(t) if all
// of them sum to less.
func (t fenwick) find(c int) int {
	if len(t) == 0 {
		return 0
	}
	pos := 0 // the sum of the counts of the indexes below pos is below c
	for step := 1 << (bits.Len(uint(len(t))) - 1); step > 0; step >>= 1 {
		if pos+step <= len(t) && t[pos+step-1] < c {
			pos += step
			c -= t[pos-1]
		}
	}
	return pos
}
