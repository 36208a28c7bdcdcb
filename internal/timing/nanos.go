package timing

import "time"

// Nanos reads a Clock as int64 Unix nanoseconds, the unit of sched.Heap
// deadlines. On the real clock the reading is the creation time plus the
// monotonic time since, so a step of the wall clock (NTP, a resumed VM)
// neither delays nor hastens a deadline; other clocks are read as they
// are. The zero value is not usable: create it with NewNanos.
type Nanos struct {
	clk   Clock
	real  bool
	epoch time.Time // creation time, with its monotonic reading
	base  int64     // epoch in Unix nanoseconds
}

// NewNanos returns a Nanos reading clk.
func NewNanos(clk Clock) Nanos {
	_, real := clk.(Real)
	epoch := clk.Now()
	return Nanos{clk: clk, real: real, epoch: epoch, base: epoch.UnixNano()}
}

// Now returns the current reading. On the real clock time.Since reads only
// the monotonic clock, which is cheaper than a full time.Now.
func (n Nanos) Now() int64 {
	if n.real {
		return n.base + int64(time.Since(n.epoch))
	}
	return n.clk.Now().UnixNano()
}

// Of returns the reading for t, a time read from the same clock.
func (n Nanos) Of(t time.Time) int64 {
	if n.real {
		return n.base + int64(t.Sub(n.epoch))
	}
	return t.UnixNano()
}

// Time returns the instant of reading ns as a Time of the clock, which on
// the real clock carries a monotonic reading, so that Sub against the
// clock's Now measures on the monotonic clock.
func (n Nanos) Time(ns int64) time.Time {
	if n.real {
		return n.epoch.Add(time.Duration(ns - n.base))
	}
	return time.Unix(0, ns)
}
