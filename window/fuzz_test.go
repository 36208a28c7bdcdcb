package window

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fuzzZones mixes the zones of the package tests with ones whose
// transitions are awkward: at midnight (Santiago, Havana), a skipped day
// (Apia, December 2011), a 45-minute offset (Kathmandu).
var fuzzZones = []string{
	"UTC", "Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata",
	"America/Santiago", "America/Havana", "America/Goose_Bay", "Pacific/Apia", "Asia/Kathmandu", "Asia/Tehran",
}

// bruteSpan is one span found by the reference scan, in Unix seconds.
type bruteSpan struct{ open, close int64 }

// bruteSpans is the reference implementation: it lists the spans of a
// schedule that open within 20 days of t by walking instants minute by minute, reading each
// minute's wall clock from the Location, and opening (closing) each opening
// day's span at the first minute whose wall clock has reached the start
// (end) time. It assumes zone transitions fall on whole minutes, which holds
// for the zones and years fuzzed.
func bruteSpans(t time.Time, start, end int, mask uint8, loc *time.Location) []bruteSpan {
	const days = 20
	first := t.Unix() - t.Unix()%60 - (days+2)*secondsPerDay
	n := (2*days + 4) * 24 * 60
	// maxWall[i] is the latest wall clock (in minutes) shown by minute i or
	// before; the first minute reaching a wall time w is the first i with
	// maxWall[i] >= w.
	maxWall := make([]int64, n)
	for i := range n {
		u := first + int64(i)*60
		_, off := time.Unix(u, 0).In(loc).Zone()
		w := floorDiv(u+int64(off), 60)
		if i > 0 && maxWall[i-1] > w {
			w = maxWall[i-1]
		}
		maxWall[i] = w
	}
	reach := func(w int64) int64 {
		i := sort.Search(n, func(i int) bool { return maxWall[i] >= w })
		if i == 0 || i == n {
			panic(fmt.Sprintf("wall minute %d outside the scan", w))
		}
		return first + int64(i)*60
	}
	_, off := t.In(loc).Zone()
	today := floorDiv(t.Unix()+int64(off), secondsPerDay)
	var spans []bruteSpan
	for d := today - days; d <= today+days; d++ {
		if mask&(1<<weekday(d)) == 0 {
			continue
		}
		closeDay := d
		if end <= start {
			closeDay++
		}
		spans = append(spans, bruteSpan{reach(d*24*60 + int64(start)), reach(closeDay*24*60 + int64(end))})
	}
	return spans
}

// bruteAnswers derives Contains, NextOpen and EndAt at t from the spans.
func bruteAnswers(t time.Time, spans []bruteSpan) (contains bool, next, end int64) {
	sec := t.Unix()
	for _, sp := range spans {
		if sp.open <= sec && sec < sp.close {
			return true, sec, sp.close
		}
	}
	next, end = -1, -1
	for _, sp := range spans {
		if sp.open == sp.close {
			continue // empty: never open
		}
		if sp.open > sec && next < 0 {
			next = sp.open
		}
		if sp.close <= sec {
			end = sp.close
		}
	}
	return false, next, end
}

// checkAgainstBrute compares s at instant at with the reference spans, which
// must reach 16 days either side of at.
func checkAgainstBrute(t *testing.T, s Schedule, at time.Time, spans []bruteSpan) {
	t.Helper()
	contains, next, endAt := bruteAnswers(at, spans)
	msg := fmt.Sprintf("%v at %v (%v)", s, at.In(s.loc), at.UTC())
	require.Equal(t, contains, s.Contains(at), "Contains: %s", msg)
	gotNext := s.NextOpen(at)
	if contains {
		require.True(t, gotNext.Equal(at), "NextOpen: %s: got %v, want t", msg, gotNext)
	} else {
		require.Equal(t, time.Unix(next, 0).UTC(), gotNext.UTC(), "NextOpen: %s", msg)
	}
	require.Equal(t, time.Unix(endAt, 0).UTC(), s.EndAt(at).UTC(), "EndAt: %s", msg)
}

// FuzzSchedule compares Contains, NextOpen and EndAt with the minute-by-minute
// reference on random windows, day masks, zones and instants (2000-2040).
// Ends run from 00:00 to 24:00.
func FuzzSchedule(f *testing.F) {
	paris := []int64{ // minutes since 2000 near Paris and New York transitions
		minutesSince2000(time.Date(2026, 3, 29, 0, 30, 0, 0, time.UTC)),
		minutesSince2000(time.Date(2026, 10, 25, 0, 50, 0, 0, time.UTC)),
		minutesSince2000(time.Date(2026, 11, 1, 6, 10, 0, 0, time.UTC)),
		minutesSince2000(time.Date(2011, 12, 30, 10, 0, 0, 0, time.UTC)),
	}
	f.Add(uint16(150), uint16(300), uint8(0x7f), uint8(1), paris[0], uint8(7))
	f.Add(uint16(60), uint16(150), uint8(0x01), uint8(1), paris[1], uint8(0))
	f.Add(uint16(150), uint16(120), uint8(0x55), uint8(1), paris[1], uint8(30))
	f.Add(uint16(90), uint16(60), uint8(0x7f), uint8(2), paris[2], uint8(59))
	f.Add(uint16(1320), uint16(360), uint8(0x2a), uint8(7), paris[3], uint8(1))
	f.Add(uint16(135), uint16(140), uint8(0x01), uint8(3), int64(0), uint8(0))
	f.Add(uint16(0), uint16(1440), uint8(0x41), uint8(1), paris[1], uint8(0))  // whole weekend days
	f.Add(uint16(0), uint16(1440), uint8(0x01), uint8(2), paris[2], uint8(30)) // New York's 25-hour Sunday
	f.Add(uint16(1380), uint16(1440), uint8(0x7f), uint8(5), int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, start, end uint16, mask, zone uint8, minute int64, second uint8) {
		st, en := int(start%1440), int(end%1441) // an end may be 24:00
		if st == en {
			en++
		}
		mask &= allDays
		if mask == 0 {
			mask = allDays
		}
		loc, err := time.LoadLocation(fuzzZones[int(zone)%len(fuzzZones)])
		require.NoError(t, err)
		var days []time.Weekday
		for d := time.Sunday; d <= time.Saturday; d++ {
			if mask&(1<<d) != 0 {
				days = append(days, d)
			}
		}
		s, err := Daily(fmt.Sprintf("%02d:%02d", st/60, st%60), fmt.Sprintf("%02d:%02d", en/60, en%60), loc, days...)
		require.NoError(t, err)
		const span = 40 * 366 * 24 * 60
		minute = ((minute % span) + span) % span
		at := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(minute)*time.Minute + time.Duration(second%60)*time.Second)
		checkAgainstBrute(t, s, at, bruteSpans(at, st, en, mask, loc))

		back, err := Parse(s.String())
		require.NoError(t, err)
		require.Equal(t, s, back, "String round trip of %q", s)
	})
}

func minutesSince2000(t time.Time) int64 {
	return int64(t.Sub(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)) / time.Minute)
}
