package storetest

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A TokenCall is a call paced by a rate limit as a test sees it, on one
// clock: Asked is when the take that gave the call its token was asked,
// Started when the call began. The token was taken at some instant
// between the two.
type TokenCall struct {
	Asked, Started time.Time
}

// ClockSlack is the one tolerance of CheckRate: how far a limit's server
// clock and the test's may disagree about a span (none when the server
// is on the test's host, but for rounding).
const ClockSlack = time.Millisecond

// CheckRate fails t if calls broke a limit of rate a second and burst
// (GCRA: in any span of length d, at most floor(rate·d) + burst tokens).
// For any two readings lo <= hi, the calls asked at or after lo that
// started at or before hi had their tokens within [lo, hi], so there may
// be at most that many of them for d = hi - lo + ClockSlack. The check
// never depends on how late a call starts after its token, which the
// readings bracket, so a loaded machine does not fail it; a limit that
// gives tokens too close together does. It costs O(len(calls)^3).
func CheckRate(t testing.TB, what string, calls []TokenCall, rate float64, burst int) {
	t.Helper()
	for _, a := range calls {
		for _, b := range calls {
			lo, hi := a.Asked, b.Started
			if hi.Before(lo) {
				continue
			}
			n := 0
			for _, c := range calls {
				if !c.Asked.Before(lo) && !c.Started.After(hi) {
					n++
				}
			}
			d := hi.Sub(lo) + ClockSlack
			most := int(math.Floor(rate*d.Seconds())) + burst
			require.LessOrEqual(t, n, most, "%d calls of %s had their tokens within %v, more than Burst + Rate·d allows", n, what, d)
		}
	}
}
