package window

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"
	_ "time/tzdata" // the zones below, should the machine lack them

	"github.com/stretchr/testify/require"
)

func utc(y int, mo time.Month, d, h, mi int) time.Time {
	return time.Date(y, mo, d, h, mi, 0, 0, time.UTC)
}

// TestScheduleDaylightSaving pins the first-instant rule on real transitions:
//
//	Europe/Paris        2026-03-29 02:00 CET -> 03:00 CEST; 2026-10-25 03:00 CEST -> 02:00 CET
//	America/New_York    2026-03-08 02:00 EST -> 03:00 EDT;  2026-11-01 02:00 EDT -> 01:00 EST
//	Australia/Lord_Howe 2026-10-04 02:00 +1030 -> 02:30 +11; 2026-04-05 02:00 +11 -> 01:30 +1030
//	America/Goose_Bay   2010-11-07 00:01 ADT -> 2010-11-06 23:01 AST (back across midnight)
//	Asia/Kolkata        +0530 all year
func TestScheduleDaylightSaving(t *testing.T) {
	tests := []struct {
		name     string
		schedule string
		at       time.Time
		contains bool
		next     time.Time // zero: at itself
		end      time.Time
	}{
		{"gap start opens after the gap", "02:30-05:00 Europe/Paris", utc(2026, 3, 29, 0, 59), false, utc(2026, 3, 29, 1, 0), utc(2026, 3, 28, 4, 0)},
		{"gap start is open at the transition", "02:30-05:00 Europe/Paris", utc(2026, 3, 29, 1, 0), true, time.Time{}, utc(2026, 3, 29, 3, 0)},
		{"repeated end closes at its first occurrence", "01:00-02:30 Europe/Paris", utc(2026, 10, 25, 0, 10), true, time.Time{}, utc(2026, 10, 25, 0, 30)},
		{"second occurrence of the end is closed", "01:00-02:30 Europe/Paris", utc(2026, 10, 25, 1, 15), false, utc(2026, 10, 26, 0, 0), utc(2026, 10, 25, 0, 30)},
		{"repeated start opens at its first occurrence", "02:30-04:00 Europe/Paris", utc(2026, 10, 25, 0, 29), false, utc(2026, 10, 25, 0, 30), utc(2026, 10, 24, 2, 0)},
		{"second occurrence of the start stays open", "02:30-04:00 Europe/Paris", utc(2026, 10, 25, 1, 15), true, time.Time{}, utc(2026, 10, 25, 3, 0)},
		{"span inside the gap is empty", "02:10-02:50 Europe/Paris", utc(2026, 3, 29, 0, 0), false, utc(2026, 3, 30, 0, 10), utc(2026, 3, 28, 1, 50)},
		{"empty span is closed at its instant", "02:10-02:50 Europe/Paris", utc(2026, 3, 29, 1, 0), false, utc(2026, 3, 30, 0, 10), utc(2026, 3, 28, 1, 50)},
		{"cross-midnight end in the gap", "22:00-02:30 Europe/Paris", utc(2026, 3, 28, 23, 0), true, time.Time{}, utc(2026, 3, 29, 1, 0)},
		{"cross-midnight closed after the gap", "22:00-02:30 Europe/Paris", utc(2026, 3, 29, 1, 0), false, utc(2026, 3, 29, 20, 0), utc(2026, 3, 29, 1, 0)},
		{"New York gap start", "02:30-09:00 America/New_York", utc(2026, 3, 8, 6, 59), false, utc(2026, 3, 8, 7, 0), utc(2026, 3, 7, 14, 0)},
		{"New York repeated end, first pass", "22:00-01:30 America/New_York", utc(2026, 11, 1, 5, 29), true, time.Time{}, utc(2026, 11, 1, 5, 30)},
		{"New York repeated end, second pass", "22:00-01:30 America/New_York", utc(2026, 11, 1, 6, 15), false, utc(2026, 11, 2, 3, 0), utc(2026, 11, 1, 5, 30)},
		{"Lord Howe 30-minute gap", "02:15-04:00 Australia/Lord_Howe", utc(2026, 10, 3, 15, 0), false, utc(2026, 10, 3, 15, 30), utc(2026, 10, 2, 17, 30)},
		{"Lord Howe open after the gap", "02:15-04:00 Australia/Lord_Howe", utc(2026, 10, 3, 15, 30), true, time.Time{}, utc(2026, 10, 3, 17, 0)},
		{"Lord Howe repeated start, second pass", "01:45-03:00 Australia/Lord_Howe", utc(2026, 4, 4, 15, 5), true, time.Time{}, utc(2026, 4, 4, 16, 30)},
		{"Lord Howe before the first occurrence", "01:45-03:00 Australia/Lord_Howe", utc(2026, 4, 4, 14, 40), false, utc(2026, 4, 4, 14, 45), utc(2026, 4, 3, 16, 0)},
		{"Lord Howe repeated end, second pass", "00:00-01:45 Australia/Lord_Howe", utc(2026, 4, 4, 15, 10), false, utc(2026, 4, 5, 13, 30), utc(2026, 4, 4, 14, 45)},
		{"Goose Bay: tomorrow opened before today's repeated hour", "00:00-00:30 America/Goose_Bay", utc(2010, 11, 7, 3, 30), true, time.Time{}, utc(2010, 11, 7, 4, 30)},
		{"Kolkata cross-midnight, next morning", "Mon 22:00-06:00 Asia/Kolkata", utc(2026, 11, 23, 23, 30), true, time.Time{}, utc(2026, 11, 24, 0, 30)},
		{"Kolkata filtered day", "Mon 22:00-06:00 Asia/Kolkata", utc(2026, 11, 24, 17, 30), false, utc(2026, 11, 30, 16, 30), utc(2026, 11, 24, 0, 30)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.schedule)
			require.NoError(t, err)
			require.Equal(t, tt.contains, s.Contains(tt.at), "Contains")
			next := tt.next
			if next.IsZero() {
				next = tt.at
			}
			require.Equal(t, next, s.NextOpen(tt.at).UTC(), "NextOpen")
			require.Equal(t, tt.end, s.EndAt(tt.at).UTC(), "EndAt")
		})
	}
}

// TestScheduleWholeDays checks that 24:00 ends a span at the next midnight,
// so "00:00-24:00" is the whole day however long the day is: 25 hours on a
// fall-back Sunday, 23 on a spring-forward one.
func TestScheduleWholeDays(t *testing.T) {
	tests := []struct {
		schedule    string
		at          time.Time // some instant on the day
		open, close time.Time
		hours       int
		ends        time.Time // EndAt, when not close: the next day's span opens at close
	}{
		{"Sat-Sun 00:00-24:00 Europe/Paris", utc(2026, 10, 25, 12, 0), utc(2026, 10, 24, 22, 0), utc(2026, 10, 25, 23, 0), 25, time.Time{}},
		{"Sat-Sun 00:00-24:00 Europe/Paris", utc(2026, 3, 29, 12, 0), utc(2026, 3, 28, 23, 0), utc(2026, 3, 29, 22, 0), 23, time.Time{}},
		{"Sat-Sun 00:00-24:00 Europe/Paris", utc(2026, 3, 28, 12, 0), utc(2026, 3, 27, 23, 0), utc(2026, 3, 28, 23, 0), 24, utc(2026, 3, 29, 22, 0)},
		{"Sun 00:00-24:00 America/New_York", utc(2026, 11, 1, 12, 0), utc(2026, 11, 1, 4, 0), utc(2026, 11, 2, 5, 0), 25, time.Time{}},
		{"Sun 00:00-24:00 America/New_York", utc(2026, 3, 8, 12, 0), utc(2026, 3, 8, 5, 0), utc(2026, 3, 9, 4, 0), 23, time.Time{}},
		{"Sun 18:00-24:00 America/New_York", utc(2026, 11, 1, 23, 0), utc(2026, 11, 1, 23, 0), utc(2026, 11, 2, 5, 0), 6, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.schedule+" "+tt.at.Format(time.DateOnly), func(t *testing.T) {
			s, err := Parse(tt.schedule)
			require.NoError(t, err)
			require.Equal(t, tt.schedule, s.String(), "String round trip")
			ends := tt.close
			if !tt.ends.IsZero() {
				ends = tt.ends
			}
			require.True(t, s.Contains(tt.at))
			require.Equal(t, ends, s.EndAt(tt.at).UTC(), "EndAt")
			require.Equal(t, time.Duration(tt.hours)*time.Hour, tt.close.Sub(tt.open))
			require.True(t, s.Contains(tt.open), "open at the first midnight")
			if !s.Contains(tt.open.Add(-time.Second)) {
				require.False(t, s.EndAt(tt.open.Add(-time.Second)).After(tt.open), "no earlier span runs past it")
			}
			require.True(t, s.Contains(tt.close.Add(-time.Second)), "open until the next midnight")
			require.Equal(t, ends, s.EndAt(tt.close.Add(-time.Second)).UTC())
		})
	}
	// Sunday's span closes at Monday 00:00, which no weekend span opens.
	s, err := Parse("Sat-Sun 00:00-24:00 Europe/Paris")
	require.NoError(t, err)
	require.False(t, s.Contains(utc(2026, 10, 25, 23, 0)))
	require.Equal(t, utc(2026, 10, 30, 23, 0), s.NextOpen(utc(2026, 10, 25, 23, 0)).UTC())
}

// TestScheduleTouchingSpans checks that spans which open as the previous
// one closes are one window: work running across Saturday midnight of
// "Sat-Sun 00:00-24:00" is not cut there, and a Schedule open every day
// from 00:00 to 24:00 never closes.
func TestScheduleTouchingSpans(t *testing.T) {
	weekend := mustParse(t, "Sat-Sun 00:00-24:00 Europe/Paris")
	satNight := utc(2026, 10, 24, 21, 59) // Saturday 23:59 in Paris
	require.Equal(t, utc(2026, 10, 25, 23, 0), weekend.EndAt(satNight).UTC(), "closes Monday 00:00")

	always := mustParse(t, "00:00-24:00 Europe/Paris")
	require.Equal(t, time.Unix(0, math.MaxInt64), always.EndAt(satNight))
	require.Equal(t, satNight, always.NextOpen(satNight))

	// Adjacent spans that do not touch still close on their own.
	evenings := mustParse(t, "Sat-Sun 18:00-24:00 Europe/Paris")
	require.Equal(t, utc(2026, 10, 24, 22, 0), evenings.EndAt(satNight).UTC())
}

func TestContextAcrossTouchingSpans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// synctest's clock starts at 2000-01-01 00:00 UTC, a Saturday.
		s := mustParse(t, "Sat-Sun 00:00-24:00 UTC")
		ctx, cancel := s.Context(context.Background())
		defer cancel()
		time.Sleep(47 * time.Hour)
		synctest.Wait()
		require.NoError(t, ctx.Err(), "open across Saturday midnight")
		time.Sleep(time.Hour)
		synctest.Wait()
		require.ErrorIs(t, context.Cause(ctx), ErrOutside, "closed at Monday 00:00")

		always, cancelAlways := mustParse(t, "00:00-24:00 UTC").Context(context.Background())
		defer cancelAlways()
		time.Sleep(30 * 24 * time.Hour)
		synctest.Wait()
		require.NoError(t, always.Err())
	})
}
