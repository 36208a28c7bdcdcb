package window

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/timing"
)

func mustParse(t testing.TB, text string) Schedule {
	t.Helper()
	s, err := Parse(text)
	require.NoError(t, err)
	return s
}

func TestDailyErrors(t *testing.T) {
	tests := []struct {
		start, end string
		loc        *time.Location
		days       []time.Weekday
		want       string
	}{
		{"25:00", "06:00", time.UTC, nil, `window: bad start time "25:00": hour must be 00-23`},
		{"06:00", "17:60", time.UTC, nil, `window: bad end time "17:60": minute must be 00-59`},
		{"9:00", "17:00", time.UTC, nil, `window: bad start time "9:00": want HH:MM; did you mean "09:00"?`},
		{"09:00", "5pm", time.UTC, nil, `window: bad end time "5pm": want HH:MM; did you mean "17:00"?`},
		{"09:00", "5 pm", time.UTC, nil, `window: bad end time "5 pm": want HH:MM`},
		{"24", "06:00", time.UTC, nil, `window: bad start time "24": want HH:MM`},
		{"00:00", "00:00", time.UTC, nil, `window: start and end are both "00:00"; a span must not be empty (the whole day is 00:00-24:00)`},
		{"09:00", "", time.UTC, nil, `window: bad end time "": want HH:MM`},
		{"09:00", "09:00", time.UTC, nil, `window: start and end are both "09:00"; a span must not be empty`},
		{"24:00", "06:00", time.UTC, nil, `window: bad start time "24:00": 24:00 can only end a span; start at 00:00`},
		{"06:00", "24:01", time.UTC, nil, `window: bad end time "24:01": hour must be 00-23, or 24:00 exactly`},
		{"06:00", "25:00", time.UTC, nil, `window: bad end time "25:00": hour must be 00-23, or 24:00 exactly`},
		{"09:00", "17:00", nil, nil, `window: nil *time.Location; use time.UTC for UTC`},
		{"09:00", "17:00", time.UTC, []time.Weekday{time.Monday, 7}, `window: bad weekday 7: want time.Sunday-time.Saturday`},
	}
	for _, tt := range tests {
		_, err := Daily(tt.start, tt.end, tt.loc, tt.days...)
		require.EqualError(t, err, tt.want)
	}
}

func TestParse(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	require.NoError(t, err)
	newYork, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	tests := []struct {
		text       string
		start, end string
		loc        *time.Location
		days       []time.Weekday
		str        string // String(), if not text
	}{
		{"Mon-Fri 09:00-17:30 Europe/Paris", "09:00", "17:30", paris, []time.Weekday{1, 2, 3, 4, 5}, ""},
		{"Mon,Wed,Fri 22:00-06:00 UTC", "22:00", "06:00", time.UTC, []time.Weekday{1, 3, 5}, ""},
		{"09:00-17:00 Asia/Kolkata", "09:00", "17:00", kolkata, nil, ""},
		{"Sat-Mon 10:00-14:00 America/New_York", "10:00", "14:00", newYork, []time.Weekday{6, 0, 1}, ""},
		{"06:00-18:00", "06:00", "18:00", time.UTC, nil, "06:00-18:00 UTC"},
		{"  mon-TUE,saturday\t00:00-23:59  UTC ", "00:00", "23:59", time.UTC, []time.Weekday{1, 2, 6}, "Mon-Tue,Sat 00:00-23:59 UTC"},
		{"Sun,Mon-Fri 08:00-09:00 UTC", "08:00", "09:00", time.UTC, []time.Weekday{0, 1, 2, 3, 4, 5}, "Sun-Fri 08:00-09:00 UTC"},
		{"Mon-Sun 08:00-09:00 UTC", "08:00", "09:00", time.UTC, nil, "08:00-09:00 UTC"},
		{"Fri-Thu 08:00-09:00 UTC", "08:00", "09:00", time.UTC, nil, "08:00-09:00 UTC"},
		{"Wed-Wed,Wed 08:00-09:00 UTC", "08:00", "09:00", time.UTC, []time.Weekday{3}, "Wed 08:00-09:00 UTC"},
		{"Sat-Sun 00:00-24:00 Europe/Paris", "00:00", "24:00", paris, []time.Weekday{6, 0}, ""},
		{"22:00-24:00 UTC", "22:00", "24:00", time.UTC, nil, ""},
		{"Sun,Tue,Thu,Sat 08:00-09:00 UTC", "08:00", "09:00", time.UTC, []time.Weekday{0, 2, 4, 6}, "Tue,Thu,Sat-Sun 08:00-09:00 UTC"},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got, err := Parse(tt.text)
			require.NoError(t, err)
			want, err := Daily(tt.start, tt.end, tt.loc, tt.days...)
			require.NoError(t, err)
			require.Equal(t, want, got)
			str := tt.str
			if str == "" {
				str = tt.text
			}
			require.Equal(t, str, got.String())
			back, err := Parse(got.String())
			require.NoError(t, err)
			require.Equal(t, got, back)
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ text, want string }{
		{"", `window: empty schedule; want "[DAYS] HH:MM-HH:MM [ZONE]"`},
		{"Mon-Fri", `window: missing times in "Mon-Fri"; want "[DAYS] HH:MM-HH:MM [ZONE]"`},
		{"Mno-Fri 09:00-17:00", `window: bad day "Mno" in "Mno-Fri": want Mon, Tue, Wed, Thu, Fri, Sat or Sun`},
		{"Mon,,Fri 09:00-17:00", `window: bad day "" in "Mon,,Fri": want Mon, Tue, Wed, Thu, Fri, Sat or Sun`},
		{"Mon-Fri 09:00", `window: bad times "09:00": want HH:MM-HH:MM`},
		{"Mon-Fri 09:00-17:00-18:00", `window: bad end time "17:00-18:00": want HH:MM`},
		{"25:00-06:00 UTC", `window: bad start time "25:00": hour must be 00-23`},
		{"Mon 09:00-17:00 UTC extra", `window: unexpected "extra" after the time zone`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.text)
		require.EqualError(t, err, tt.want, "Parse(%q)", tt.text)
	}
}

// TestParseErrorHints checks that errors suggest the form Parse reads
// where one reading is obvious, and say nothing twice.
func TestParseErrorHints(t *testing.T) {
	tests := []struct{ text, want string }{
		{"09:00-17:00 Mars/Olympus_Mons", `window: unknown time zone "Mars/Olympus_Mons"`},
		{"09:00-17:00 ../etc/passwd", `window: bad time zone "../etc/passwd": time: invalid location name`},
		{"09:00-17:00 Europe/paris", `window: unknown time zone "Europe/paris"; did you mean "Europe/Paris"?`},
		{"09:00-17:00 america/new_york", `window: unknown time zone "america/new_york"; did you mean "America/New_York"?`},
		{"09:00-17:00 utc", `window: unknown time zone "utc"; did you mean "UTC"?`},
		{"09:00-17:00 PST", `window: unknown time zone "PST": an abbreviation, not a zone name; did you mean "America/Los_Angeles"?`},
		{"09:00-17:00 est", `window: unknown time zone "est": an abbreviation, not a zone name; did you mean "America/New_York"?`},
		{"09:00-17:00 cest", `window: unknown time zone "cest": an abbreviation, not a zone name; did you mean "Europe/Paris"?`},
		{"09:00-17:00 UTC+2", `window: unknown time zone "UTC+2"; did you mean "Etc/GMT-2" (Etc/ signs are inverted)?`},
		{"09:00-17:00 GMT-05:00", `window: unknown time zone "GMT-05:00"; did you mean "Etc/GMT+5" (Etc/ signs are inverted)?`},
		{"09:00-17:00 UTC+0", `window: unknown time zone "UTC+0"; did you mean "UTC"?`},
		{"09:00-17:00 UTC+5:30", `window: unknown time zone "UTC+5:30"`},
		{"09:00-17:00 Mon-Fri", `window: unknown time zone "Mon-Fri"; days go first: did you mean "Mon-Fri 09:00-17:00"?`},
		{"Sat 09:00-17:00 Sun Europe/Paris", `window: unknown time zone "Sun"; days go first: did you mean "Sat,Sun 09:00-17:00 Europe/Paris"?`},
		{"9:00-17:30", `window: bad times "9:00-17:30": want HH:MM-HH:MM; did you mean "09:00-17:30"?`},
		{"Mon 9-17 UTC", `window: bad times "9-17": want HH:MM-HH:MM; did you mean "09:00-17:00"?`},
		{"9am-5:30pm", `window: bad times "9am-5:30pm": want HH:MM-HH:MM; did you mean "09:00-17:30"?`},
		{"0900-1700", `window: bad times "0900-1700": want HH:MM-HH:MM; did you mean "09:00-17:00"?`},
		{"09h30-12h00", `window: bad times "09h30-12h00": want HH:MM-HH:MM; did you mean "09:30-12:00"?`},
		{"09:00 - 17:00 UTC", `window: bad times "09:00": want HH:MM-HH:MM; did you mean "09:00-17:00"?`},
		{"09:00 -17:00", `window: bad times "09:00": want HH:MM-HH:MM; did you mean "09:00-17:00"?`},
		{"09:00–17:00", `window: bad times "09:00–17:00": want HH:MM-HH:MM; did you mean "09:00-17:00"?`},
		{"22:00-24", `window: bad times "22:00-24": want HH:MM-HH:MM; did you mean "22:00-24:00"?`},
		{"24-06:00", `window: bad start time "24": want HH:MM`},
		{"24:00-06:00", `window: bad start time "24:00": 24:00 can only end a span; start at 00:00`},
		{"9-25", `window: bad start time "9": want HH:MM; did you mean "09:00"?`},
		{"00:00-00:00", `window: start and end are both "00:00"; a span must not be empty (the whole day is 00:00-24:00)`},
		{"Tues-Thurs 09:00-17:00", `window: bad day "Tues" in "Tues-Thurs"; did you mean "Tue"?`},
		{"Mon-Th 09:00-17:00", `window: bad day "Th" in "Mon-Th"; did you mean "Thu"?`},
		{"T 09:00-17:00", `window: bad day "T" in "T": want Mon, Tue, Wed, Thu, Fri, Sat or Sun`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.text)
		require.EqualError(t, err, tt.want, "Parse(%q)", tt.text)
	}
	for _, text := range []string{"never", "Never", "NEVER"} {
		s, err := Parse(text)
		require.NoError(t, err, "Parse(%q)", text)
		require.True(t, s.IsZero())
	}
}

// TestZoneFoldWithoutZoneinfo covers systems with no zoneinfo directory
// (Windows, or tzdata embedded in the binary): the usual capitalisation is
// tried instead.
func TestZoneFoldWithoutZoneinfo(t *testing.T) {
	t.Setenv("ZONEINFO", "")
	dirs := zoneDirs
	zoneDirs = nil
	t.Cleanup(func() { zoneDirs = dirs })
	require.Equal(t, "America/New_York", zoneFold("AMERICA/NEW_YORK"))
	require.Equal(t, "UTC", zoneFold("utc"))
	require.Empty(t, zoneFold("america/port-au-prince"), "beyond the usual capitalisation")
}

func TestScheduleSpans(t *testing.T) {
	// 2026-11-23 is a Monday.
	s := mustParse(t, "Mon,Fri 22:00-06:00 UTC")
	tests := []struct {
		at       time.Time
		contains bool
		next     time.Time // zero: at itself
		end      time.Time
	}{
		{utc(2026, 11, 23, 21, 59), false, utc(2026, 11, 23, 22, 0), utc(2026, 11, 21, 6, 0)},
		{utc(2026, 11, 23, 22, 0), true, time.Time{}, utc(2026, 11, 24, 6, 0)},
		// Tuesday morning belongs to Monday's span, though Tuesday is not a day of s.
		{utc(2026, 11, 24, 5, 59), true, time.Time{}, utc(2026, 11, 24, 6, 0)},
		{utc(2026, 11, 24, 6, 0), false, utc(2026, 11, 27, 22, 0), utc(2026, 11, 24, 6, 0)},
		// Tuesday 22:00 is not an opening: Tuesday is filtered out.
		{utc(2026, 11, 24, 23, 0), false, utc(2026, 11, 27, 22, 0), utc(2026, 11, 24, 6, 0)},
		// Saturday morning belongs to Friday's span; Sunday to none.
		{utc(2026, 11, 28, 3, 0), true, time.Time{}, utc(2026, 11, 28, 6, 0)},
		{utc(2026, 11, 29, 3, 0), false, utc(2026, 11, 30, 22, 0), utc(2026, 11, 28, 6, 0)},
	}
	for _, tt := range tests {
		require.Equal(t, tt.contains, s.Contains(tt.at), "Contains(%v)", tt.at)
		next := tt.next
		if next.IsZero() {
			next = tt.at
		}
		require.Equal(t, next, s.NextOpen(tt.at).UTC(), "NextOpen(%v)", tt.at)
		require.Equal(t, tt.end, s.EndAt(tt.at).UTC(), "EndAt(%v)", tt.at)
		// Sub-second parts do not move a boundary.
		late := tt.at.Add(time.Second - time.Nanosecond)
		require.Equal(t, tt.contains, s.Contains(late), "Contains(%v)", late)
	}
}

func TestScheduleResultsInLocation(t *testing.T) {
	s := mustParse(t, "09:00-17:00 Asia/Kolkata")
	at := utc(2026, 11, 23, 0, 0)
	require.Equal(t, s.Location(), s.NextOpen(at).Location())
	require.Equal(t, s.Location(), s.EndAt(at).Location())
	require.Equal(t, "2026-11-23 09:00:00 +0530 IST", s.NextOpen(at).String())
}

// TestEndAtTooLate is the fan-out fired after its window's close: EndAt is
// in the past, so a loop bounded by it sends nothing.
func TestEndAtTooLate(t *testing.T) {
	s := mustParse(t, "06:00-18:00 Europe/Paris")
	fired := utc(2026, 11, 23, 18, 30) // 19:30 in Paris
	end := s.EndAt(fired)
	require.False(t, s.Contains(fired))
	require.Equal(t, utc(2026, 11, 23, 17, 0), end.UTC())
	sent := fanOut(fired, end, 1000)
	require.Zero(t, sent)

	// Fired an hour before the close, it sends until then.
	early := utc(2026, 11, 23, 16, 0)
	require.Equal(t, 60, fanOut(early, s.EndAt(early), 1000))
}

// fanOut sends one message a minute from start until end or n messages,
// returning how many it sent.
func fanOut(start, end time.Time, n int) int {
	sent := 0
	for now := start; sent < n && now.Before(end); now = now.Add(time.Minute) {
		sent++
	}
	return sent
}

func TestZeroSchedule(t *testing.T) {
	var s Schedule
	at := utc(2026, 11, 23, 12, 0)
	require.False(t, s.Contains(at))
	require.True(t, s.NextOpen(at).IsZero())
	require.Equal(t, at, s.EndAt(at))
	require.Equal(t, "never", s.String())
	require.Equal(t, time.UTC, s.Location())
	require.True(t, s.IsZero())
	require.False(t, mustParse(t, "09:00-17:00").IsZero())
	back, err := Parse("never")
	require.NoError(t, err)
	require.Equal(t, s, back)
}

func TestText(t *testing.T) {
	var s Schedule
	require.NoError(t, s.UnmarshalText([]byte("Sat-Mon 22:00-06:00 Europe/Paris")))
	require.Equal(t, mustParse(t, "Sat-Mon 22:00-06:00 Europe/Paris"), s)
	text, err := s.MarshalText()
	require.NoError(t, err)
	require.Equal(t, "Sat-Mon 22:00-06:00 Europe/Paris", string(text))

	require.EqualError(t, s.UnmarshalText([]byte("Sat-Mon 22:00")), `window: bad times "22:00": want HH:MM-HH:MM`)
	require.Equal(t, mustParse(t, "Sat-Mon 22:00-06:00 Europe/Paris"), s, "unchanged on error")

	mock := clock.NewMock()
	s = s.WithClock(mock)
	require.NoError(t, s.UnmarshalText([]byte("never")))
	require.True(t, s.IsZero())
	require.Equal(t, timing.From(mock), s.clock(), "keeps its clock")
}

// TestExtremeInstants checks the invariants at the ends of time.Time's range
// and in the local mean time of 1900, whose offsets are not whole minutes.
func TestExtremeInstants(t *testing.T) {
	s := mustParse(t, "Tue 23:30-00:15 Europe/Paris")
	for _, at := range []time.Time{{}, utc(1900, 6, 6, 12, 0), utc(9999, 12, 28, 0, 0)} {
		next, end := s.NextOpen(at), s.EndAt(at)
		require.True(t, s.Contains(next), "NextOpen(%v) = %v", at, next)
		require.True(t, next.After(at), "NextOpen(%v) = %v", at, next)
		require.False(t, end.After(at), "EndAt(%v) = %v", at, end)
		require.True(t, s.Contains(end.Add(-time.Second)), "EndAt(%v) = %v", at, end)
	}
}

// TestScheduleModel checks the invariants that tie the three queries
// together on random schedules and instants: NextOpen is open and nothing
// between t and it is; EndAt of an open t is after t and the span is open
// up to it and closed at it; EndAt of a closed t is at or before t.
func TestScheduleModel(t *testing.T) {
	s := mustParse(t, "Tue,Sat-Sun 23:30-01:15 Australia/Lord_Howe")
	for at := utc(2026, 3, 28, 0, 0); at.Before(utc(2026, 4, 12, 0, 0)); at = at.Add(17 * time.Minute) {
		next, end := s.NextOpen(at), s.EndAt(at)
		require.True(t, s.Contains(next), "NextOpen(%v) = %v", at, next)
		if s.Contains(at) {
			require.Equal(t, at, next)
			require.True(t, end.After(at))
			require.True(t, s.Contains(end.Add(-time.Second)))
			require.False(t, s.Contains(end))
		} else {
			require.True(t, next.After(at))
			require.False(t, s.Contains(next.Add(-time.Second)))
			require.False(t, end.After(at))
		}
	}
}
