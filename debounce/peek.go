package debounce

import "time"

// Open is what one key's open burst holds, read at one instant by Peek.
type Open struct {
	// Count is the number of Adds in the burst, as Burst.Count counts
	// them.
	Count int
	// First and Last are the times of the burst's first and most recent
	// Add.
	First, Last time.Time
	// Deadline is when the burst fires unless another Add comes: its
	// quiet period after Last, but no later than MaxWait after First.
	Deadline time.Time
	// MaxWait reports that Deadline is MaxWait after First, which came
	// before the end of the quiet period (false when both fall at once).
	MaxWait bool
}

// Peek returns key's open burst, and reports whether it has one. It
// changes nothing: a burst whose deadline has passed but that has not
// fired yet is still shown, with its Deadline in the past, for it is
// about to fire. With Leading, a burst whose only value fired at the
// leading edge is shown too, as Pending counts it. Peek costs one map
// lookup under the debouncer's lock.
func (k *Keyed[K, V]) Peek(key K) (Open, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.entries[key]
	if e == nil || e.seq() == 0 {
		return Open{}, false
	}
	quiet := k.quietAt(key, e)
	deadline := k.deadline(key, e)
	n := len(e.vals)
	if e.state&led != 0 {
		n++ // the value that fired at the leading edge
	}
	return Open{
		Count:    n,
		First:    k.ns.Time(e.first),
		Last:     k.ns.Time(e.last),
		Deadline: k.ns.Time(deadline),
		MaxWait:  deadline < quiet,
	}, true
}
