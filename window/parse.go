package window

import (
	"fmt"
	"strings"
	"time"
)

// Parse reads a Schedule from text of the form
//
//	[DAYS] HH:MM-HH:MM [ZONE]
//
// separated by spaces, or "never" (in any case) for the zero Schedule, where
//
//   - DAYS is a comma-separated list of days and day ranges: "Mon-Fri",
//     "Mon,Wed,Fri", "Mon-Wed,Sat". Days are English names or their
//     three-letter abbreviations, in any case. A range runs forward through
//     the week and may wrap: "Sat-Mon" is Saturday, Sunday and Monday.
//     Without DAYS the window opens every day.
//   - HH:MM-HH:MM are the start and end times, 24-hour wall clock, as in
//     Daily; "22:00-06:00" crosses midnight and belongs to the day it
//     opens on. The end may be 24:00, the midnight that ends the day:
//     "Sat-Sun 00:00-24:00" is the whole weekend, 25 hours on a fall-back
//     Sunday.
//   - ZONE is an IANA time zone name for time.LoadLocation, e.g.
//     "Europe/Paris"; it defaults to UTC. Abbreviations are not zone
//     names: the few that tzdata keeps as legacy zones load, but may not
//     mean what was meant ("EST" is UTC-5 all year, with no daylight
//     saving), so write "America/New_York".
//
// When the text is close to this form, the error says what it most likely
// means: `window: bad times "9-17": want HH:MM-HH:MM; did you mean
// "09:00-17:00"?`, or `window: unknown time zone "Europe/paris"; did you
// mean "Europe/Paris"?`.
//
// Examples: "Mon-Fri 09:00-17:30 Europe/Paris", "Mon,Wed,Fri 22:00-06:00 UTC",
// "09:00-17:00 Asia/Kolkata", "Sat-Mon 10:00-14:00 America/New_York",
// "Sat-Sun 00:00-24:00 Europe/Paris".
func Parse(text string) (Schedule, error) {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return Schedule{}, fmt.Errorf("window: empty schedule; want \"[DAYS] HH:MM-HH:MM [ZONE]\"")
	}
	if len(fields) == 1 && strings.EqualFold(fields[0], "never") {
		return Schedule{}, nil
	}
	var days []time.Weekday
	daysField := ""
	if c := fields[0][0]; c < '0' || c > '9' {
		var err error
		if days, err = parseDays(fields[0]); err != nil {
			return Schedule{}, err
		}
		daysField, fields = fields[0], fields[1:]
	}
	if len(fields) == 0 {
		return Schedule{}, fmt.Errorf("window: missing times in %q; want \"[DAYS] HH:MM-HH:MM [ZONE]\"", text)
	}
	if hint := timesHint(fields); hint != "" {
		return Schedule{}, fmt.Errorf("window: bad times %q: want HH:MM-HH:MM; did you mean %q?", fields[0], hint)
	}
	start, end, ok := strings.Cut(fields[0], "-")
	if !ok {
		return Schedule{}, fmt.Errorf("window: bad times %q: want HH:MM-HH:MM", fields[0])
	}
	loc := time.UTC
	if len(fields) > 1 {
		var err error
		if loc, err = time.LoadLocation(fields[1]); err != nil {
			return Schedule{}, zoneError(daysField, fields, err)
		}
	}
	if len(fields) > 2 {
		return Schedule{}, fmt.Errorf("window: unexpected %q after the time zone", fields[2])
	}
	return Daily(start, end, loc, days...)
}

// zoneError explains why fields[1], after the times fields[0] and the days
// daysField, is not a time zone.
func zoneError(daysField string, fields []string, err error) error {
	name := fields[1]
	if err.Error() != "unknown time zone "+name {
		// Not the plain "unknown time zone" that would repeat the name.
		return fmt.Errorf("window: bad time zone %q: %w", name, err)
	}
	if _, err := parseDays(name); err == nil {
		if daysField != "" {
			name = daysField + "," + name
		}
		moved := append([]string{name, fields[0]}, fields[2:]...)
		return fmt.Errorf("window: unknown time zone %q; days go first: did you mean %q?", fields[1], strings.Join(moved, " "))
	}
	return fmt.Errorf("window: unknown time zone %q%s", name, zoneHint(name))
}

var dayNames = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}

// parseDays reads DAYS into the weekdays it names.
func parseDays(v string) ([]time.Weekday, error) {
	var days []time.Weekday
	for item := range strings.SplitSeq(v, ",") {
		first, last, isRange := strings.Cut(item, "-")
		from, err := parseDay(first, v)
		if err != nil {
			return nil, err
		}
		to := from
		if isRange {
			if to, err = parseDay(last, v); err != nil {
				return nil, err
			}
		}
		for d := from; ; d = (d + 1) % 7 {
			days = append(days, d)
			if d == to {
				break
			}
		}
	}
	return days, nil
}

func parseDay(name, list string) (time.Weekday, error) {
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(name, dayNames[d]) || strings.EqualFold(name, d.String()) {
			return d, nil
		}
	}
	if hint := dayHint(name); hint != "" {
		return 0, fmt.Errorf("window: bad day %q in %q; did you mean %q?", name, list, hint)
	}
	return 0, fmt.Errorf("window: bad day %q in %q: want Mon, Tue, Wed, Thu, Fri, Sat or Sun", name, list)
}

// dayList writes a day mask as DAYS: runs of consecutive days become
// ranges, listed from the first run that starts on or after Monday.
func dayList(mask uint8) string {
	in := func(d int) bool { return mask&(1<<((d+7)%7)) != 0 }
	var parts []string
	for i := range 7 {
		d := (int(time.Monday) + i) % 7
		if !in(d) || in(d-1) {
			continue // not the first day of a run
		}
		last := d
		for in(last + 1) {
			last++
		}
		part := dayNames[d]
		if last != d {
			part += "-" + dayNames[last%7]
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ",")
}

// MarshalText returns s.String(), so a Schedule can be a configuration field
// or, with flag.TextVar, a command-line flag.
func (s Schedule) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText sets s to Parse(text), keeping the clock set by WithClock.
// On error s is unchanged.
func (s *Schedule) UnmarshalText(text []byte) error {
	parsed, err := Parse(string(text))
	if err != nil {
		return err
	}
	parsed.clk = s.clk
	*s = parsed
	return nil
}
