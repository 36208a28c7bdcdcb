package store

import (
	"container/heap"
	"slices"
)

// firstNames keeps the max least names it is given, in a max-heap whose
// root is the greatest kept: a name above the root, once max are kept, is
// turned away in one comparison, so that n names cost O(n log max) at
// worst and O(n) comparisons when most are turned away.
type firstNames struct {
	max   int
	names maxHeap
}

// wants reports whether name would be kept now.
func (f *firstNames) wants(name string) bool {
	return len(f.names) < f.max || name < f.names[0]
}

// add keeps name if it is among the max least so far; it is not kept
// already.
func (f *firstNames) add(name string) {
	switch {
	case len(f.names) < f.max:
		heap.Push(&f.names, name)
	case name < f.names[0]:
		f.names[0] = name
		heap.Fix(&f.names, 0)
	}
}

// sorted returns the names kept, in order.
func (f *firstNames) sorted() []string {
	out := []string(f.names)
	slices.Sort(out)
	return out
}

// maxHeap is a container/heap of strings, the greatest at the root.
type maxHeap []string

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
