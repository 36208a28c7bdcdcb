package main

import "time"

// dateLayout is how task dates travel in JSON: a civil date, no time of day.
const dateLayout = time.DateOnly

// isBusinessDay reports whether d falls on Monday to Friday.
func isBusinessDay(d time.Time) bool {
	wd := d.Weekday()
	return wd != time.Saturday && wd != time.Sunday
}

// firstBusinessDay returns d when it is a business day, else the Monday after.
func firstBusinessDay(d time.Time) time.Time {
	for !isBusinessDay(d) {
		d = d.AddDate(0, 0, 1)
	}
	return d
}

// addBusinessDays returns the business day n business days after d, skipping
// weekends; d itself is moved to a business day first. n must be >= 0.
func addBusinessDays(d time.Time, n int) time.Time {
	d = firstBusinessDay(d)
	for n > 0 {
		d = d.AddDate(0, 0, 1)
		if isBusinessDay(d) {
			n--
		}
	}
	return d
}

// civilDate drops the time of day of t, keeping its calendar date in t's location.
func civilDate(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
