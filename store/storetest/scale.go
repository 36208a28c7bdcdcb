package storetest

import (
	"fmt"
	"testing"
	"time"
)

// maxScale is the largest scale Run stretches a scenario to: at it, tick
// is 1.28 s and Late 64 s. A machine too slow for a scenario even
// then (two Adds that took more than 5 s, say) fails it.
const maxScale = 64

// tooSlow is the panic of fixture.slow: something took took, where the
// scenario needed less than limit.
type tooSlow struct {
	why         string
	took, limit time.Duration
}

// runScaled runs a scenario at scale 1 and, each time the machine was too
// slow for it, again at a larger scale, on a queue of its own, until a try
// ends with the scenario's assertions checked, or the scale would pass
// maxScale, which fails t.
func runScaled(t *testing.T, run func(*fixture), h Harness) {
	t.Helper()
	twin := h.Twin
	if twin == nil {
		twin = h.Store
	}
	for scale := 1; ; {
		q := h.Queue
		if scale > 1 {
			q = fmt.Sprintf("%s/scale%d", h.Queue, scale)
		}
		f := &fixture{t: t, s: h.Store, twin: twin, beginTx: h.BeginTx, q: q, ctx: t.Context(),
			scale: scale, tick: tick * time.Duration(scale), late: Late * time.Duration(scale)}
		slow, again := runOnce(run, f)
		if !again {
			return
		}
		next, ok := nextScale(scale, slow)
		if !ok {
			t.Fatalf("the machine was too slow for this scenario even with its durations %d times as long: %s (%v, more than %v)",
				scale, slow.why, slow.took, slow.limit)
		}
		t.Logf("with its durations %d times as long, the machine was too slow for this scenario: %s (%v, more than %v); running it again with them %d times as long",
			scale, slow.why, slow.took, slow.limit, next)
		scale = next
	}
}

// nextScale returns the scale of the try after one at scale that was too
// slow: at least twice scale, and enough that the duration that was too
// short becomes at least twice what it had to outlast; or false if that
// passes maxScale.
func nextScale(scale int, slow tooSlow) (int, bool) {
	next := 2 * scale
	for next <= maxScale && slow.limit*time.Duration(next) < 2*slow.took*time.Duration(scale) {
		next *= 2
	}
	return next, next <= maxScale
}

// runOnce runs one try of a scenario, and reports whether the machine was
// too slow for it to prove anything, and why: then it must run again.
func runOnce(run func(*fixture), f *fixture) (slow tooSlow, again bool) {
	defer func() {
		if v := recover(); v != nil {
			s, isSlow := v.(tooSlow)
			if !isSlow {
				panic(v)
			}
			slow, again = s, true
		}
	}()
	run(f)
	return tooSlow{}, false
}
