package ratelimit_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
)

var raNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		v    string
		max  time.Duration
		want time.Duration
		ok   bool
	}{
		{"0", 0, 0, true},
		{"1", 0, time.Second, true},
		{" 120 ", 0, 2 * time.Minute, true},
		{"3600", 0, time.Hour, true},
		{"3601", 0, 0, false}, // over the default cap
		{"30", 10 * time.Second, 0, false},
		{"10", 10 * time.Second, 10 * time.Second, true},
		{"007", 0, 7 * time.Second, true},
		{"99999999999999999999999999", 0, 0, false}, // would overflow
		{"-1", 0, 0, false},
		{"+5", 0, 0, false},
		{"1.5", 0, 0, false},
		{"1e3", 0, 0, false},
		{"", 0, 0, false},
		{"soon", 0, 0, false},
		{"Sun, 01 Mar 2026 12:00:30 GMT", 0, 30 * time.Second, true},  // IMF-fixdate
		{"Sunday, 01-Mar-26 12:01:00 GMT", 0, time.Minute, true},      // RFC 850
		{"Sun Mar  1 12:00:05 2026", 0, 5 * time.Second, true},        // ANSI C asctime
		{"Sun, 01 Mar 2026 11:59:00 GMT", 0, 0, true},                 // in the past: retry now
		{"Sun, 01 Mar 2026 12:00:00 GMT", 0, 0, true},                 // exactly now
		{"Sun, 01 Mar 2026 14:00:00 GMT", 0, 0, false},                // over the cap
		{"Fri, 31 Dec 9999 23:59:59 GMT", 0, 0, false},                // absurdly far
		{"Sun, 01 Mar 2026 12:00:30 +0100", 0, 0, false},              // not an HTTP-date
		{"Sun, 01 Mar 2026 12:00:30 GMT trailing", 0, 0, false},       // garbage after
		{"Sun, 01 Mar 2026 12:00:30 GMT", 10 * time.Second, 0, false}, // over a small cap
		{"Sun, 01 Mar 2026 12:00:10 GMT", 10 * time.Second, 10 * time.Second, true},
	} {
		d, ok := ratelimit.ParseRetryAfter(tc.v, raNow, tc.max)
		require.Equal(t, tc.ok, ok, "%q", tc.v)
		require.Equal(t, tc.want, d, "%q", tc.v)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	h := http.Header{}
	_, ok := ratelimit.HeaderRetryAfter(h, raNow)
	require.False(t, ok)
	h.Set("Retry-After", "5")
	d, ok := ratelimit.HeaderRetryAfter(h, raNow)
	require.True(t, ok)
	require.Equal(t, 5*time.Second, d)
}

// FuzzRetryAfter checks the one promise that matters to a sleeper: ok
// implies 0 <= d <= the cap, for any header value, time and cap.
func FuzzRetryAfter(f *testing.F) {
	for _, v := range []string{
		"0", "1", "120", "3600", "3601", "-1", "1.5", "", "  7\t",
		"99999999999999999999", "Sun, 01 Mar 2026 12:00:30 GMT",
		"Sunday, 01-Mar-26 12:01:00 GMT", "Sun Mar  1 12:00:05 2026",
		"Mon, 01 Jan 0001 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
	} {
		f.Add(v, raNow.Unix(), int64(0))
		f.Add(v, raNow.Unix(), int64(time.Minute))
	}
	f.Fuzz(func(t *testing.T, v string, nowSec int64, maxNanos int64) {
		now := time.Unix(nowSec%(1<<40), 0) // within a few thousand years of 1970
		d, ok := ratelimit.ParseRetryAfter(v, now, time.Duration(maxNanos))
		limit := time.Duration(maxNanos)
		if limit <= 0 {
			limit = ratelimit.DefaultMaxRetryAfter
		}
		if !ok {
			require.Zero(t, d)
			return
		}
		require.GreaterOrEqual(t, d, time.Duration(0), "%q", v)
		require.LessOrEqual(t, d, limit, "%q", v)
	})
}
