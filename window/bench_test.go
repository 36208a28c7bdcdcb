package window

import (
	"testing"
	"time"
)

var sinkBool bool
var sinkTime time.Time

// benchInstants are 1024 instants from from, one every 10 minutes (a week).
// The loops index them with i&1023: a division there would cost as much as
// a lookup.
func benchInstants(b *testing.B, from time.Time) []time.Time {
	b.Helper()
	out := make([]time.Time, 1024)
	for i := range out {
		out[i] = from.Add(time.Duration(i) * 10 * time.Minute)
	}
	return out
}

func benchSchedule(b *testing.B) Schedule {
	return mustParse(b, "Mon-Fri 22:00-06:00 Europe/Paris")
}

func BenchmarkScheduleContains(b *testing.B) {
	s := benchSchedule(b)
	for _, bc := range []struct {
		name string
		from time.Time
	}{
		// The zone period of "now", which time.Location caches.
		{"now", utc(2026, 11, 16, 0, 0)},
		// Another period: the Location binary-searches its transitions.
		{"summer", utc(2026, 7, 6, 0, 0)},
		// The days after a transition walk the zone periods.
		{"afterTransition", utc(2026, 10, 25, 1, 0)},
	} {
		at := benchInstants(b, bc.from)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sinkBool = s.Contains(at[i&1023])
				i++
			}
		})
	}
}

func BenchmarkScheduleNextOpen(b *testing.B) {
	s := benchSchedule(b)
	at := benchInstants(b, utc(2026, 11, 16, 0, 0))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		sinkTime = s.NextOpen(at[i&1023])
		i++
	}
}

func BenchmarkScheduleEndAt(b *testing.B) {
	s := benchSchedule(b)
	at := benchInstants(b, utc(2026, 11, 16, 0, 0))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		sinkTime = s.EndAt(at[i&1023])
		i++
	}
}

// BenchmarkTimeDate is the yardstick: one time.Date call, which a naive
// Contains would make twice or more.
func BenchmarkTimeDate(b *testing.B) {
	loc := benchSchedule(b).Location()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		sinkTime = time.Date(2026, 11, 16+i%7, 9, 0, 0, 0, loc)
		i++
	}
}
