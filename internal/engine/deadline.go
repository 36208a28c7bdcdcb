package engine

import (
	"sync"
	"time"
)

// A Deadline is when the holder of an engine's lease must stop working
// under it, by the holder's own clock, whatever its calls to the engine
// are doing: the time the call that last proved the lease (the claim, then
// each renewal that succeeded) was sent, plus the TTL less Margin.
//
// The guarantee rests on three things. The engine counts a lease's TTL on
// its own clock from when it got that call, which is after the holder sent
// it. The holder measures on a monotonic clock (time.Now's monotonic
// reading, which no wall-clock jump moves). And the two clocks run at about
// the same rate: Margin covers a rate difference of a tenth, far beyond
// that of real clocks, plus a fixed slack for the time the holder takes to
// act on its deadline. The holder then stops before the engine can lease
// the key to another. A holder paused past its deadline (SIGSTOP, a long
// GC) learns it only when it runs again; the fence guards what it does
// then.
//
// A Deadline only moves forward, and never once it has passed: a lease
// the holder gave up stays given up. It is safe for concurrent use.
type Deadline struct {
	ttl time.Duration
	mu  sync.Mutex
	at  time.Time
}

// Renewed moves the deadline to Life after sent, the send time of a
// renewal that succeeded, unless the deadline passed at now or is later
// already. It reports whether the lease is still held at now.
func (d *Deadline) Renewed(sent, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !now.Before(d.at) {
		return false
	}
	if at := sent.Add(Life(d.ttl)); at.After(d.at) {
		d.at = at
	}
	return true
}

// At returns the deadline.
func (d *Deadline) At() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at
}

// Lapsed reports whether the deadline passed at now.
func (d *Deadline) Lapsed(now time.Time) bool { return !now.Before(d.At()) }

// Margin is how long before the engine may end a lease of ttl its holder
// gives it up: a tenth of ttl, for the clocks' rates, plus MarginSlack.
func Margin(ttl time.Duration) time.Duration { return ttl/10 + MarginSlack }

// MarginSlack is the fixed part of Margin: time for the holder to act on
// its deadline (a timer that fires late, a busy scheduler) and for an
// engine that rounds its times.
const MarginSlack = 10 * time.Millisecond

// Life is how long a lease of ttl lasts for its holder after the call that
// last proved it was sent: ttl less Margin.
func Life(ttl time.Duration) time.Duration { return ttl - Margin(ttl) }
