// Package adaptive is the controller behind pacer.Adaptive: a debounce
// quiet period that follows the pressure on a Runner. A pressure level in
// [0, 1] jumps up to the backlog's share of a full backlog, or by a step at
// each shared rate-limit pause, and decays exponentially with a half-life
// otherwise; the quiet period is min + level*(max-min).
//
// Time is passed in (the …At methods), so the controller reads no clock.
package adaptive

import (
	"math"
	"sync"
	"time"
)

// pauseStep is how much one shared rate-limit pause raises the pressure
// level, so a single 429 moves the quiet period half-way to max and a
// second one all the way.
const pauseStep = 0.5

// A Wait is the quiet period of a Runner with Adaptive. It is safe for
// concurrent use; make one with New.
type Wait struct {
	min, max time.Duration
	backlog  int           // the backlog at which the level reaches 1
	halfLife time.Duration // how fast the level decays

	mu    sync.Mutex
	level float64
	at    time.Time // when level was last brought up to date
}

// New returns a Wait from min to max that reaches max at a backlog of
// backlog values and decays with halfLife; backlog and halfLife must be
// positive.
func New(min, max time.Duration, backlog int, halfLife time.Duration) *Wait {
	return &Wait{min: min, max: max, backlog: backlog, halfLife: halfLife}
}

// decayAt brings level up to date at t. The caller holds mu.
func (a *Wait) decayAt(t time.Time) {
	if dt := t.Sub(a.at); dt > 0 && a.level > 0 {
		a.level *= math.Exp2(-float64(dt) / float64(a.halfLife))
		if a.level < 1e-3 {
			a.level = 0
		}
	}
	if t.After(a.at) {
		a.at = t
	}
}

// WaitAt returns the quiet period at t with backlog values queued.
func (a *Wait) WaitAt(t time.Time, backlog int) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.decayAt(t)
	a.level = max(a.level, min(1, float64(backlog)/float64(a.backlog)))
	return a.min + time.Duration(a.level*float64(a.max-a.min))
}

// PausedAt records a shared rate-limit pause at t.
func (a *Wait) PausedAt(t time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.decayAt(t)
	a.level = min(1, a.level+pauseStep)
}

// CurrentAt returns the quiet period at t without new information.
func (a *Wait) CurrentAt(t time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.decayAt(t)
	return a.min + time.Duration(a.level*float64(a.max-a.min))
}
