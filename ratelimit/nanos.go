package ratelimit

import (
	"math"
	"time"
)

// Times are kept as Unix nanoseconds, which overflow int64 after the year
// 2262. A huge pause, IdleTTL or ctx deadline saturates at that instant
// instead of wrapping around into the past.

// maxTime is the latest time that Unix nanoseconds can hold.
var maxTime = time.Unix(0, math.MaxInt64)

// unixNanos returns t in Unix nanoseconds, saturated at math.MaxInt64.
func unixNanos(t time.Time) int64 {
	if t.After(maxTime) {
		return math.MaxInt64
	}
	return t.UnixNano()
}

// addNanos returns a+d for a >= 0 and d >= 0, saturated at math.MaxInt64.
func addNanos(a, d int64) int64 {
	if d > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + d
}
