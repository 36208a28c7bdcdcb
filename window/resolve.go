package window

import (
	"math"
	"time"
)

const (
	secondsPerDay = 24 * 60 * 60

	// margin exceeds any UTC offset a zone can have (tzdata stays within
	// ±24h). An instant more than margin before a wall time w shows a wall
	// clock earlier than w, whatever the zone did in between.
	margin = 2 * secondsPerDay
)

// A resolver turns wall-clock times of one location into instants.
//
// Wall clocks are counted in "wall seconds": the seconds since 1970-01-01
// 00:00 of the local calendar, as if the zone were UTC. The instant of a wall
// time w is the first instant u whose wall clock reads w or later. That is
// the daylight-saving rule of the package in one line: a wall time skipped by
// a spring-forward gap resolves to the first instant after the gap, and a wall
// time repeated by a fall-back resolves to its first occurrence.
//
// Most wall times lie well inside one zone period (a stretch of time with a
// fixed UTC offset); for those the instant is plain arithmetic. The resolver
// remembers the period around the instant it was made for and only asks the
// Location again near a transition.
type resolver struct {
	loc *time.Location
	off int64 // UTC offset, in seconds, of the period [lo-off-margin, hi-off)
	// Wall times w in [lo, hi) are shown by the instant w-off inside that
	// period, at least margin after its start, so no earlier instant shows a
	// wall clock as late as w.
	lo, hi int64
}

// newResolver returns a resolver for loc seeded with the zone period of t,
// and t's wall clock in wall seconds.
func newResolver(t time.Time, loc *time.Location) (r resolver, wall int64) {
	t = t.In(loc)
	_, off := t.Zone()
	start, end := t.ZoneBounds()
	r = resolver{loc: loc, off: int64(off), lo: math.MinInt64, hi: math.MaxInt64}
	if !start.IsZero() {
		r.lo = start.Unix() + margin + r.off
	}
	if !end.IsZero() {
		r.hi = end.Unix() + r.off
	}
	return r, t.Unix() + r.off
}

// instant returns the first instant, in Unix seconds, whose wall clock reads
// w or later.
func (r *resolver) instant(w int64) int64 {
	if w < r.lo || w >= r.hi {
		return firstAtOrAfter(r.loc, w)
	}
	return w - r.off
}

// firstAtOrAfter walks the zone periods of loc from margin before w and
// returns the first instant whose wall clock reads w or later.
func firstAtOrAfter(loc *time.Location, w int64) int64 {
	u := w - margin // wall clock still before w here
	// A few days hold a handful of transitions at most; the bound only
	// guards against a broken Location.
	for range 64 {
		t := time.Unix(u, 0).In(loc)
		_, off := t.Zone()
		v := w - int64(off) // where this period's wall clock reads w
		if v <= u {
			// The clock jumped over w when this period began: a gap.
			return u
		}
		_, end := t.ZoneBounds()
		if end.IsZero() || v < end.Unix() {
			return v
		}
		u = end.Unix()
	}
	return u
}

// weekday returns the weekday of the day that starts at wall second
// day*secondsPerDay (day 0 is Thursday, 1970-01-01).
func weekday(day int64) time.Weekday {
	wd := (day + 4) % 7
	if wd < 0 {
		wd += 7
	}
	return time.Weekday(wd)
}

// floorDiv returns a/b rounded toward negative infinity, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
