package shared

import (
	"sync"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
)

// A stopper stops a timer before it fires, and reports whether it did.
type stopper interface{ stop() bool }

// stopFunc is a func as a stopper.
type stopFunc func() bool

func (f stopFunc) stop() bool { return f() }

// A ringer is what an alarm rings: a keeper whose first renewal is due
// (keptLease), a call in the background at its deadline (storeCall).
type ringer interface{ ring() }

// An alarm is a time.AfterFunc timer of the real clock that rings a
// ringer. engineCalls keeps the alarms stopped in time for the next
// ringers: most batches end before their first renewal, and most calls
// answer before their deadline, and then cost neither a timer nor a func
// for it.
type alarm struct {
	calls *engineCalls
	t     *time.Timer // made once, by the alarm's first arm
	mu    sync.Mutex
	k     ringer // what it rings
}

// fire is the timer's func.
func (a *alarm) fire() {
	a.mu.Lock()
	k := a.k
	a.mu.Unlock()
	k.ring()
}

// stop implements stopper. An alarm stopped before it fired goes back to
// engineCalls for the next lease: its func will not run (Go 1.23 and
// later), so the next keeper is the only one it can start.
func (a *alarm) stop() bool {
	if !a.t.Stop() {
		return false
	}
	a.mu.Lock()
	a.k = nil // not kept alive by the alarm
	a.mu.Unlock()
	a.calls.alarms.put(a)
	return true
}

// arm rings k after d, on the timer's goroutine, unless the returned
// stopper stops it first.
func (c *engineCalls) arm(d time.Duration, k ringer) stopper {
	if _, real := c.clk.(timing.Real); !real {
		return stopFunc(timing.AfterFunc(c.clk, d, k.ring))
	}
	a, ok := c.alarms.get()
	if !ok {
		a = &alarm{calls: c, k: k}
		a.mu.Lock()
		a.t = time.AfterFunc(d, a.fire)
		a.mu.Unlock()
		return a
	}
	a.mu.Lock()
	a.k = k
	a.mu.Unlock()
	a.t.Reset(d)
	return a
}

// maxAlarms is how many stopped alarms engineCalls keeps for the next
// ringers: about as many as leases are kept at once.
const maxAlarms = 256
