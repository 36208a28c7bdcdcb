package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestShowKey(t *testing.T) {
	for k, shown := range map[string]string{
		"user-42": "user-42", "a b": "a b", "": `""`, "a\tb": `"a\tb"`, "\xff": `"\xff"`,
		`"quoted"`: `"\"quoted\""`, "línea": "línea", "a\u200bb": `"a\u200bb"`,
	} {
		assert.Equal(t, shown, showKey(k), "%q", k)
		assert.Equal(t, k, argKey(showKey(k)), "%q reads back", k)
	}
	assert.Equal(t, `"unterminated`, argKey(`"unterminated`))
}

func TestShowValue(t *testing.T) {
	for _, c := range []struct{ in, form, shown string }{
		{"{\n  \"a\": [1, 2]\n}", asJSON, `{"a":[1,2]}`},
		{"42", asJSON, "42"},
		{"hello world", asText, "hello world"},
		{"two\nlines", asHex, "74776f0a6c696e6573"},
		{"\xff\x00", asHex, "ff00"},
		{"", asEmpty, ""},
	} {
		form, shown := showValue([]byte(c.in))
		assert.Equal(t, c.form, form, "%q", c.in)
		assert.Equal(t, c.shown, shown, "%q", c.in)
	}
	long := make([]byte, 500)
	for i := range long {
		long[i] = 'x'
	}
	_, shown := showValue(long)
	assert.Equal(t, maxCell, len([]rune(shown)))
	assert.Equal(t, "…", string([]rune(shown)[maxCell-1:]))
}

func TestShowTime(t *testing.T) {
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for d, shown := range map[time.Duration]string{
		250 * time.Millisecond:              "250ms ago (2026-05-01T09:59:59Z)",
		42 * time.Second:                    "42s ago (2026-05-01T09:59:18Z)",
		3*time.Minute + 12*time.Second:      "3m12s ago (2026-05-01T09:56:48Z)",
		5*time.Hour + 7*time.Minute:         "5h07m ago (2026-05-01T04:53:00Z)",
		50 * time.Hour:                      "2d02h ago (2026-04-29T08:00:00Z)",
		-(4*time.Second + time.Millisecond): "in 4s (2026-05-01T10:00:04Z)",
	} {
		assert.Equal(t, shown, showTime(now, now.Add(-d)), "%v", d)
	}
	assert.Equal(t, "-", showTime(now, time.Time{}))
	// A time in another zone shows in UTC.
	assert.Equal(t, "1s ago (2026-05-01T09:59:59Z)", showTime(now, now.Add(-time.Second).In(time.FixedZone("X", 3600))))
}
