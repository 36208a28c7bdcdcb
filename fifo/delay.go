package fifo

import (
	"time"

	"github.com/pacerkit/pacer/internal/sched"
	"github.com/pacerkit/pacer/internal/timing"
)

// delayer holds the deadlines of delayed adds and retries: one heap, one
// goroutine and one timer for all keys, started on first use so a queue
// that never delays owns no goroutine. Its owner guards it with its lock.
type delayer[K any] struct {
	clk  timing.Clock
	ns   timing.Nanos // deadlines' scale: immune to steps of the wall clock
	heap sched.Heap[K]
	loop *sched.Loop
}

func newDelayer[K any](clk timing.Clock) delayer[K] {
	return delayer[K]{clk: clk, ns: timing.NewNanos(clk)}
}

// deadline returns now+after on the delayer's nanosecond scale, saturated:
// a delay meaning "forever" (up to math.MaxInt64) gives the latest reading
// there is, which never comes due, instead of wrapping round to the past.
func (d *delayer[K]) deadline(after time.Duration) int64 {
	return timing.AddNanos(d.ns.Now(), after)
}

// push schedules key at (a deadline from deadline). run is the owner's callback for
// the loop, used when the loop starts; it must take the owner's lock and
// call due.
func (d *delayer[K]) push(key K, at int64, run func(now time.Time) (time.Time, bool)) {
	if d.loop == nil {
		d.loop = sched.Start(d.clk, run)
	}
	if d.heap.Push(key, at) {
		d.loop.Wake()
	}
}

// due pops every entry due at now, calling fire for each in deadline order,
// and returns the next deadline.
func (d *delayer[K]) due(now time.Time, fire func(key K, at int64)) (time.Time, bool) {
	n := d.ns.Of(now)
	for {
		key, at, ok := d.heap.Peek()
		if !ok {
			return time.Time{}, false
		}
		if at > n {
			return d.ns.Time(at), true
		}
		d.heap.Pop()
		fire(key, at)
	}
}
