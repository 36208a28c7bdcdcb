package pacer

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 250 * time.Millisecond, Max: 2 * time.Second, Multiplier: 4}.withDefaults()
	for _, tc := range []struct {
		n    int
		r    float64
		want time.Duration
	}{
		{1, 0, 250 * time.Millisecond},
		{2, 0, time.Second},
		{3, 0, 2 * time.Second},
		{1000, 0, 2 * time.Second}, // no overflow
		{math.MaxInt, 0, 2 * time.Second},
		{math.MinInt, 0, 250 * time.Millisecond},
	} {
		require.Equal(t, tc.want, b.delay(tc.n, tc.r), "n=%d", tc.n)
	}
	b.Jitter = 1 // full jitter: uniform in [0, d)
	require.Equal(t, time.Second, b.delay(2, 0))
	require.Equal(t, 250*time.Millisecond, b.delay(2, 0.75))
	b.Jitter = 0.5
	require.Equal(t, 750*time.Millisecond, b.delay(2, 0.5))

	d := Backoff{}.withDefaults()
	require.Equal(t, Backoff{Initial: time.Second, Max: 5 * time.Minute, Multiplier: 2, Attempts: 25}, d)
	require.Equal(t, Unlimited, Backoff{Attempts: Unlimited}.withDefaults().Attempts)
	var total time.Duration
	for n := 1; n < d.Attempts; n++ {
		total += d.delay(n, 0)
	}
	require.Equal(t, 5011*time.Second, total, "about 84 minutes, as the doc says")
	for range 100 {
		got := Backoff{Initial: time.Second, Jitter: 1}.Delay(1)
		require.True(t, got >= 0 && got <= time.Second, got)
	}
}

// A Max meaning "forever" and a growth past the range of a Duration give
// Max, never a negative wait: float64(math.MaxInt64) is 2^63, which does
// not convert back.
func TestBackoffDelaySaturates(t *testing.T) {
	forever := time.Duration(math.MaxInt64)
	for _, tc := range []struct {
		b    Backoff
		n    int
		r    float64
		want time.Duration
	}{
		{Backoff{Max: forever}, 8, 0, 128 * time.Second},
		{Backoff{Max: forever}, 64, 0, forever},
		{Backoff{Max: forever}, math.MaxInt, 0, forever},
		{Backoff{Initial: time.Millisecond, Multiplier: 1e13, Max: forever}, 1, 0, time.Millisecond},
		{Backoff{Initial: time.Millisecond, Multiplier: 1e13, Max: forever}, 2, 0, forever},
		{Backoff{Initial: forever, Max: forever}, 1, 0, forever},
		{Backoff{Initial: forever, Max: forever, Jitter: 1}, 1, 0.5, forever - forever/2 - 1},
		{Backoff{Initial: forever, Max: forever, Jitter: 1}, 1, math.Nextafter(1, 0), 1023},
	} {
		b := tc.b.withDefaults()
		got := b.delay(tc.n, tc.r)
		require.Equal(t, tc.want, got, "%+v n=%d r=%v", tc.b, tc.n, tc.r)
	}
}

// FuzzBackoffDelay checks that delay stays in [0, Max] for any fields, any
// n and any draw, valid or not, and that without jitter the waits of a
// valid Backoff never shrink from one retry to the next.
func FuzzBackoffDelay(f *testing.F) {
	for _, d := range []int64{math.MaxInt64, math.MinInt64, 0, 1} {
		f.Add(8, d, d, 2.0, 0.0, 0.0)
		f.Add(math.MaxInt, int64(time.Millisecond), d, 1e13, 1.0, 0.999)
	}
	f.Add(1, int64(0), int64(0), math.Inf(1), math.NaN(), 0.5)
	f.Fuzz(func(t *testing.T, n int, initial, maxWait int64, mult, jitter, r float64) {
		b := Backoff{Initial: time.Duration(initial), Max: time.Duration(maxWait), Multiplier: mult, Jitter: jitter}
		got := b.delay(n, r)
		if got < 0 || got > max(b.Max, 0) {
			t.Fatalf("%+v.delay(%d, %v) = %v, outside [0, Max]", b, n, r, got)
		}
		b.Jitter = 0
		if b.validate() != nil || n < 1 || n == math.MaxInt {
			return
		}
		b = b.withDefaults()
		if d0, d1 := b.delay(n, r), b.delay(n+1, r); d1 < d0 {
			t.Fatalf("%+v: retry %d waits %v, retry %d only %v", b, n, d0, n+1, d1)
		}
	})
}
