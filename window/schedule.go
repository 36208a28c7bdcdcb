package window

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/internal/timing"
)

// A Schedule is a daily delivery window in a time zone: on each of its days
// it opens at a wall-clock start time and closes at a wall-clock end time.
//
// Each opening day holds one span [open, close). When the end time is not
// after the start time (22:00-06:00) the span crosses midnight and closes on
// the next day; it still belongs to the day it opens on, and only that day has
// to be one of the Schedule's days. Spans never overlap; two spans may touch
// when a daylight-saving transition swallows the time between them.
//
// Wall times are turned into instants by the first-instant rule: a wall time
// that does not exist that day (spring-forward gap) means the first instant
// after the gap, and a wall time that occurs twice (fall-back) means its
// first occurrence. A span whose start and end both fall in one gap is empty
// that day and never open.
//
// Contains, EndAt and NextOpen are pure functions of their argument. Context
// and Wait read the Schedule's clock (see WithClock).
//
// A Schedule is a small immutable value, safe for concurrent use. The zero
// Schedule is never open. Build one with Daily or Parse.
type Schedule struct {
	start, end int32 // minutes after midnight, wall clock; end may be 24*60
	days       uint8 // bit d set: a span opens on time.Weekday(d)
	loc        *time.Location
	clk        timing.Clock // nil: the real clock
}

const allDays = 1<<7 - 1

// Daily returns the Schedule open from start to end, both "HH:MM" wall-clock
// times in loc, on the given days, or on every day when days is empty. If end
// is not after start the span crosses midnight. start and end must differ.
// end may be "24:00", the midnight that ends the opening day, so
// "00:00"-"24:00" is the whole day, however long daylight saving makes it:
// 25 hours on a fall-back day, 23 on a spring-forward one. start may not be
// "24:00".
//
// The error names what is wrong, e.g.
// `window: bad start time "25:00": hour must be 00-23`.
func Daily(start, end string, loc *time.Location, days ...time.Weekday) (Schedule, error) {
	s := Schedule{loc: loc}
	var err error
	if s.start, err = parseClock("start", start); err != nil {
		return Schedule{}, err
	}
	if s.end, err = parseClock("end", end); err != nil {
		return Schedule{}, err
	}
	if s.start == s.end {
		whole := ""
		if s.start == 0 {
			whole = " (the whole day is 00:00-24:00)"
		}
		return Schedule{}, fmt.Errorf("window: start and end are both %q; a span must not be empty%s", start, whole)
	}
	if loc == nil {
		return Schedule{}, fmt.Errorf("window: nil *time.Location; use time.UTC for UTC")
	}
	for _, d := range days {
		if d < time.Sunday || d > time.Saturday {
			return Schedule{}, fmt.Errorf("window: bad weekday %d: want time.Sunday-time.Saturday", int(d))
		}
		s.days |= 1 << d
	}
	if len(days) == 0 {
		s.days = allDays
	}
	return s, nil
}

// parseClock parses "HH:MM" into minutes after midnight; which is "start"
// or "end", for the error. An end may be "24:00", the midnight that ends
// the day.
func parseClock(which, v string) (int32, error) {
	digit := func(i int) int32 { return int32(v[i] - '0') }
	ok := len(v) == 5 && v[2] == ':'
	for _, i := range []int{0, 1, 3, 4} {
		ok = ok && v[i] >= '0' && v[i] <= '9'
	}
	if !ok {
		if hint := clockHint(which, v); hint != "" {
			return 0, fmt.Errorf("window: bad %s time %q: want HH:MM; did you mean %q?", which, v, hint)
		}
		return 0, fmt.Errorf("window: bad %s time %q: want HH:MM", which, v)
	}
	h, m := digit(0)*10+digit(1), digit(3)*10+digit(4)
	switch {
	case h == 24 && m == 0 && which == "end":
		return 24 * 60, nil
	case h == 24 && m == 0:
		return 0, fmt.Errorf("window: bad %s time %q: 24:00 can only end a span; start at 00:00", which, v)
	case h > 23 && which == "end":
		return 0, fmt.Errorf("window: bad %s time %q: hour must be 00-23, or 24:00 exactly", which, v)
	case h > 23:
		return 0, fmt.Errorf("window: bad %s time %q: hour must be 00-23", which, v)
	case m > 59:
		return 0, fmt.Errorf("window: bad %s time %q: minute must be 00-59", which, v)
	}
	return h*60 + m, nil
}

// WithClock returns a copy of s whose Context and Wait read c, e.g. a
// *clock.Mock in tests. A nil c, the default, is the real clock, which also
// follows the fake time of a testing/synctest bubble.
func (s Schedule) WithClock(c clock.Clock) Schedule {
	s.clk = timing.From(c)
	return s
}

// IsZero reports whether s is the zero Schedule, which is never open.
func (s Schedule) IsZero() bool { return s.days == 0 }

// Location returns the time zone of s (UTC for the zero Schedule).
func (s Schedule) Location() *time.Location {
	if s.loc == nil {
		return time.UTC
	}
	return s.loc
}

// Contains reports whether t lies in one of the spans of s.
func (s Schedule) Contains(t time.Time) bool {
	var sp located
	return s.locate(t, &sp) && sp.sec < sp.close
}

// EndAt returns the close of the span that contains t, in the Schedule's
// location. Spans that open at the very instant the previous one closes
// count as one: in "Sat-Sun 00:00-24:00" the window that contains Saturday
// 23:59 closes on Monday at 00:00. A Schedule open at every instant (every
// day, 00:00-24:00) never closes: EndAt then returns time.Unix(0,
// math.MaxInt64), in the year 2262.
//
// If t lies outside every span, EndAt returns the instant the window last
// closed: the close of the latest non-empty span that ended at or before t.
// For "Mon-Fri 06:00-18:00", at 19:00 on a Tuesday that is Tuesday 18:00; at
// 05:00 on Tuesday, Monday 18:00; on Sunday, Friday 18:00. For "22:00-06:00"
// at 12:00 it is 06:00 that day, the close of the previous evening's span.
// The result is then never after t, so work given it as a deadline does
// nothing: a fan-out fired after its window closed sends nothing. For the
// zero Schedule EndAt returns t.
func (s Schedule) EndAt(t time.Time) time.Time {
	var sp located
	if !s.locate(t, &sp) {
		return t
	}
	if sp.sec < sp.close {
		closing, ok := s.stretchClose(&sp.r, sp.day, sp.close)
		if !ok {
			return forever
		}
		return time.Unix(closing, 0).In(s.loc)
	}
	// Spans close in day order, so the first non-empty one back from the
	// located day is the latest. Empty spans (in a gap) are rare; two weeks
	// back always finds one.
	for d := sp.day; d > sp.day-15; d-- {
		if s.opensOn(d) {
			if open, closing := s.span(&sp.r, d); open < closing {
				return time.Unix(closing, 0).In(s.loc)
			}
		}
	}
	return t
}

// forever is the close of a Schedule that never closes: the latest instant
// whose Unix nanoseconds fit an int64, so that a timer or deadline set for
// it does not overflow.
var forever = time.Unix(0, math.MaxInt64)

// stretchClose follows the spans that open at the instant the one opening
// on day closes, at closing, and returns the close of the last of them. It
// reports false if the spans never stop: only a Schedule open every day
// from 00:00 to 24:00 does that, and a week shows it.
func (s *Schedule) stretchClose(r *resolver, day, closing int64) (int64, bool) {
	for d := day + 1; d <= day+7; d++ {
		if !s.opensOn(d) || s.openOf(r, d) != closing {
			return closing, true
		}
		closing = s.closeOf(r, d)
	}
	return closing, false
}

// NextOpen returns t if s contains t, or else the first instant after t at
// which s opens, in the Schedule's location. It returns the zero Time if s
// never opens (the zero Schedule).
func (s Schedule) NextOpen(t time.Time) time.Time {
	var sp located
	if !s.locate(t, &sp) {
		return time.Time{}
	}
	if sp.sec < sp.close {
		return t
	}
	for d := sp.day + 1; d < sp.day+16; d++ {
		if s.opensOn(d) {
			if open, closing := s.span(&sp.r, d); open < closing {
				return time.Unix(open, 0).In(s.loc)
			}
		}
	}
	return time.Time{}
}

// located is the latest span that opened at or before an instant.
type located struct {
	r     resolver
	sec   int64 // the instant, in Unix seconds (rounded down)
	day   int64 // the opening day of the span, in days since 1970-01-01
	close int64 // the close of the span, in Unix seconds
}

// locate finds the latest span of s that opened at or before t. Spans are
// disjoint and ordered, so t is in a span iff it is before that span's close.
// It reports false only when s has no days.
func (s *Schedule) locate(t time.Time, sp *located) bool {
	if s.days == 0 {
		return false
	}
	var wall int64
	sp.r, wall = newResolver(t, s.loc)
	sp.sec = t.Unix()
	today := floorDiv(wall, secondsPerDay)
	// A fall-back across midnight can put tomorrow's start before t. Every
	// span opening before today opened before t, and one of them opens
	// within a week, so the loop always finds one.
	wd := weekday(today + 1)
	for d := today + 1; d >= today-7; d-- {
		if s.days>>wd&1 != 0 {
			if s.openOf(&sp.r, d) <= sp.sec {
				sp.day, sp.close = d, s.closeOf(&sp.r, d)
				return true
			}
		}
		if wd--; wd < 0 {
			wd = time.Saturday
		}
	}
	return false
}

func (s *Schedule) opensOn(day int64) bool { return s.days&(1<<weekday(day)) != 0 }

// span returns the span opening on day, in Unix seconds.
func (s *Schedule) span(r *resolver, day int64) (open, close int64) {
	return s.openOf(r, day), s.closeOf(r, day)
}

func (s *Schedule) openOf(r *resolver, day int64) int64 {
	return r.instant(day*secondsPerDay + int64(s.start)*60)
}

func (s *Schedule) closeOf(r *resolver, day int64) int64 {
	if s.end < s.start {
		day++ // crosses midnight
	}
	// An end of 24:00 is day*secondsPerDay + secondsPerDay: the next
	// midnight, resolved like any wall time.
	return r.instant(day*secondsPerDay + int64(s.end)*60)
}

// String returns s in the form Parse reads, e.g. "Mon-Fri 09:00-17:30
// Europe/Paris": days are left out when s opens every day, and the zero
// Schedule is "never". It round-trips through Parse when the location came
// from time.LoadLocation (or is time.UTC or time.Local).
func (s Schedule) String() string {
	if s.days == 0 {
		return "never"
	}
	var b strings.Builder
	if s.days != allDays {
		b.WriteString(dayList(s.days))
		b.WriteByte(' ')
	}
	fmt.Fprintf(&b, "%02d:%02d-%02d:%02d %s", s.start/60, s.start%60, s.end/60, s.end%60, s.loc)
	return b.String()
}
