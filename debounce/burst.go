package debounce

import "time"

// A Burst is what fire receives: the values added to one key since it was
// last quiet, in the order they were added.
type Burst[V any] struct {
	// Values holds the values in Add order. fire owns the slice.
	Values []V

	// First is the time of the burst's first Add and Last that of its most
	// recent one. When the burst led (Config.Leading, on a quiet key), First
	// is the time of the value that already fired at the leading edge.
	First, Last time.Time

	// Count is the number of Adds in the burst. It equals len(Values),
	// except for the trailing part of a burst that led, where it also counts
	// the value that fired at the leading edge (len(Values)+1).
	Count int
}
