// Package jsonfield is how pacer's JSON shows durations and instants, the
// two kinds of field whose Go encoding does not read as a person expects: a
// time.Duration is a count of nanoseconds, and a time.Time keeps the zone
// of the clock that read it.
//
// A type marshals with these by shadowing its duration and time fields:
//
//	func (s Stats) MarshalJSON() ([]byte, error) {
//		type fields Stats // the same fields and tags, without the methods
//		return json.Marshal(struct {
//			fields
//			Wait jsonfield.Seconds `json:"wait_seconds"`
//		}{fields(s), jsonfield.Seconds(s.Wait)})
//	}
//
// encoding/json takes the shallower of two fields with one name, so the
// outer field replaces the embedded one.
package jsonfield

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Seconds is a duration that JSON shows as a number of seconds, exactly:
// 5202027777ns is 5.202027777, 5s is 5. Unmarshal reads any JSON number,
// to within a nanosecond (exactly when it has no exponent and at most
// nine decimals).
type Seconds time.Duration

// MarshalJSON writes the duration as a decimal number of seconds with no
// trailing zeros. UnmarshalJSON reads it back exactly; a float64 reads it
// to within a nanosecond below 2^53 ns (104 days).
func (s Seconds) MarshalJSON() ([]byte, error) {
	u := uint64(s)
	b := make([]byte, 0, 24)
	if s < 0 {
		u = -u // two's complement: right for math.MinInt64 too
		b = append(b, '-')
	}
	b = strconv.AppendUint(b, u/1e9, 10)
	if frac := u % 1e9; frac != 0 {
		digits := strconv.AppendUint(nil, 1e9+frac, 10)[1:] // nine digits, leading zeros kept
		b = append(b, '.')
		b = append(b, bytes.TrimRight(digits, "0")...)
	}
	return b, nil
}

// UnmarshalJSON reads a JSON number of seconds; null leaves s unchanged.
func (s *Seconds) UnmarshalJSON(b []byte) error {
	str := string(b)
	if str == "null" {
		return nil
	}
	if str == "" || (str[0] != '-' && (str[0] < '0' || str[0] > '9')) {
		return fmt.Errorf("jsonfield: seconds must be a number, not %s", str)
	}
	// A decimal without exponent is parsed exactly, in integers.
	if d, err := time.ParseDuration(str + "s"); err == nil {
		*s = Seconds(d)
		return nil
	}
	f, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return fmt.Errorf("jsonfield: seconds must be a number, not %s", str)
	}
	ns := math.Round(f * 1e9)
	if ns < math.MinInt64 || ns >= math.MaxInt64 {
		return fmt.Errorf("jsonfield: %s seconds do not fit a time.Duration", str)
	}
	*s = Seconds(ns)
	return nil
}

// Time is an instant that JSON shows in RFC 3339, in UTC, with as many
// digits of the second as it holds (none for a whole second, up to nine).
// With the tag option omitzero, the zero Time is left out.
type Time time.Time

// IsZero reports whether t is the zero instant, for omitzero.
func (t Time) IsZero() bool { return time.Time(t).IsZero() }

// MarshalJSON writes t in UTC as time.Time does: RFC 3339 with the
// fraction of a second it holds.
func (t Time) MarshalJSON() ([]byte, error) { return time.Time(t).UTC().MarshalJSON() }

// UnmarshalJSON reads an RFC 3339 instant, in the zone it names; null
// leaves t unchanged.
func (t *Time) UnmarshalJSON(b []byte) error { return (*time.Time)(t).UnmarshalJSON(b) }
