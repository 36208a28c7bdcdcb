package window

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// transitions returns the zone transitions of loc in [from, to).
func transitions(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	for t := from; t.Before(to); {
		_, end := t.In(loc).ZoneBounds()
		if end.IsZero() || !end.Before(to) {
			break
		}
		out = append(out, end)
		t = end
	}
	return out
}

// TestScheduleMatchesBruteAroundTransitions runs the reference comparison of
// FuzzSchedule deterministically where it matters: random windows around
// every transition of the fuzzed zones in 2025-2026 (Goose Bay in 2010, Apia
// in December 2011),
// at random instants and at every span boundary and the second before it.
func TestScheduleMatchesBruteAroundTransitions(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range fuzzZones {
		loc, err := time.LoadLocation(name)
		require.NoError(t, err)
		from, to := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
		switch name {
		case "Pacific/Apia":
			from, to = time.Date(2011, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2012, 1, 1, 0, 0, 0, 0, time.UTC)
		case "America/Goose_Bay":
			from, to = time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2011, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		for _, tr := range transitions(loc, from, to) {
			for range 3 {
				start, end, mask, s := randomSchedule(t, rng, loc, tr)
				spans := bruteSpans(tr, start, end, mask, loc)
				for range 40 {
					at := tr.Add(time.Duration(rng.Int64N(int64(60*time.Hour))) - 30*time.Hour).Truncate(time.Second)
					checkAgainstBrute(t, s, at, spans)
				}
				for _, sp := range spans {
					for _, u := range []int64{sp.open - 1, sp.open, sp.close - 1, sp.close} {
						if at := time.Unix(u, 0); at.Sub(tr).Abs() < 3*24*time.Hour {
							checkAgainstBrute(t, s, at, spans)
						}
					}
				}
			}
		}
	}
}

// randomSchedule picks a window whose ends often fall near the wall clock of
// the transition tr, so they land in gaps and repeated hours. An end at
// midnight is 00:00 or 24:00 at random.
func randomSchedule(t *testing.T, rng *rand.Rand, loc *time.Location, tr time.Time) (start, end int, mask uint8, s Schedule) {
	t.Helper()
	near := func() int {
		if rng.IntN(3) == 0 {
			return rng.IntN(1440)
		}
		w := tr.In(loc)
		return ((w.Hour()*60+w.Minute()+rng.IntN(181)-90)%1440 + 1440) % 1440
	}
	start, end = near(), near()
	if start == end {
		end = (end + 1) % 1440
	}
	if end == 0 && rng.IntN(2) == 0 {
		end = 24 * 60 // the same midnight, written as the end of the day
	}
	mask = allDays
	if rng.IntN(2) == 0 {
		mask = uint8(rng.IntN(allDays) + 1)
	}
	var days []time.Weekday
	for d := time.Sunday; d <= time.Saturday; d++ {
		if mask&(1<<d) != 0 {
			days = append(days, d)
		}
	}
	s, err := Daily(fmt.Sprintf("%02d:%02d", start/60, start%60), fmt.Sprintf("%02d:%02d", end/60, end%60), loc, days...)
	require.NoError(t, err)
	return start, end, mask, s
}
