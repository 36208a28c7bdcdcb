package ratelimit

import (
	"net/http"
	"strings"
	"time"
)

// DefaultMaxRetryAfter is the longest Retry-After that HeaderRetryAfter accepts.
// A server asking for more is treated as not having said when to retry.
const DefaultMaxRetryAfter = time.Hour

// HeaderRetryAfter is shorthand for ParseRetryAfter(h.Get("Retry-After"), now,
// DefaultMaxRetryAfter).
func HeaderRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	return ParseRetryAfter(h.Get("Retry-After"), now, DefaultMaxRetryAfter)
}

// ParseRetryAfter parses the value of a Retry-After header (RFC 9110,
// section 10.2.3) and reports how long to wait from now.
//
// The value is either delta-seconds (one or more ASCII digits, no sign) or
// an HTTP-date in any of the three forms http.ParseTime accepts. Space
// around it is ignored. An HTTP-date at or before now yields 0, true: the
// server's time to retry has come. A wait longer than limit, an empty value,
// a negative number, a fraction or anything else yields 0, false, so a
// broken or hostile header never turns into a negative or endless sleep.
// A limit <= 0 means DefaultMaxRetryAfter. Whenever ok is true,
// 0 <= d <= limit.
func ParseRetryAfter(v string, now time.Time, limit time.Duration) (d time.Duration, ok bool) {
	if limit <= 0 {
		limit = DefaultMaxRetryAfter
	}
	v = strings.Trim(v, " \t")
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		max := int64(limit / time.Second)
		var secs int64
		for i := 0; i < len(v); i++ {
			secs = secs*10 + int64(v[i]-'0')
			if secs > max {
				return 0, false
			}
		}
		return time.Duration(secs) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d = at.Sub(now) // saturates, so a far date is never a small wait
	switch {
	case d <= 0:
		return 0, true
	case d > limit:
		return 0, false
	}
	return d, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
