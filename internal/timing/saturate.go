package timing

import (
	"math"
	"time"
)

// AddNanos returns the reading a+d, saturated at the ends of int64 instead
// of wrapping around: a deadline d after a, for a d meaning "forever" (up to
// math.MaxInt64), is the latest instant there is, never one in the past.
func AddNanos(a int64, d time.Duration) int64 {
	switch {
	case d > 0 && a > math.MaxInt64-int64(d):
		return math.MaxInt64
	case d < 0 && a < math.MinInt64-int64(d):
		return math.MinInt64
	}
	return a + int64(d)
}
