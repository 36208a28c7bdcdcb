package timing

import (
	"math"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
)

// On a mock clock Nanos is the clock's Unix nanoseconds, both ways.
func TestNanosMock(t *testing.T) {
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC))
	n := NewNanos(From(mock))
	require.Equal(t, mock.Now().UnixNano(), n.Now())
	mock.Add(90 * time.Minute)
	require.Equal(t, mock.Now().UnixNano(), n.Now())
	require.True(t, n.Time(n.Now()).Equal(mock.Now()))
}

// On the real clock Nanos follows the monotonic clock and converts back to
// a Time that carries a monotonic reading.
func TestNanosReal(t *testing.T) {
	n := NewNanos(Real{})
	before := time.Now()
	ns := n.Now()
	after := time.Now()
	require.LessOrEqual(t, n.Of(before), ns)
	require.LessOrEqual(t, ns, n.Of(after))
	at := n.Time(ns + int64(time.Hour))
	require.NotEqual(t, at, at.Round(0), "carries a monotonic reading")
	require.InDelta(t, float64(time.Hour), float64(time.Until(at)), float64(time.Minute))
}

// TestNanosLatest checks that the latest reading, the saturated deadline of
// a delay meaning "forever", converts to a Time far ahead of now and back
// without wrapping, on both kinds of clock.
func TestNanosLatest(t *testing.T) {
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC))
	for name, clk := range map[string]Clock{"real": Real{}, "mock": From(mock)} {
		n := NewNanos(clk)
		at := n.Time(math.MaxInt64)
		require.Greater(t, at.Sub(clk.Now()), 200*365*24*time.Hour, name)
		require.Equal(t, int64(math.MaxInt64), n.Of(at), name)
	}
}
