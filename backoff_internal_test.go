package pacer

import (
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
	} {
		require.Equal(t, tc.want, b.delay(tc.n, tc.r), "n=%d", tc.n)
	}
	b.Jitter = 1 // full jitter: uniform in [0, d)
	require.Equal(t, time.Second, b.delay(2, 0))
	require.Equal(t, 250*time.Millisecond, b.delay(2, 0.75))
	b.Jitter = 0.5
	require.Equal(t, 750*time.Millisecond, b.delay(2, 0.5))

	d := Backoff{}.withDefaults()
	require.Equal(t, Backoff{Initial: time.Second, Max: 5 * time.Minute, Multiplier: 2}, d)
	for range 100 {
		got := Backoff{Initial: time.Second, Jitter: 1}.Delay(1)
		require.True(t, got >= 0 && got <= time.Second, got)
	}
}

func TestAdaptiveWait(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := newAdaptiveWait(time.Second, Adaptive{Max: 9 * time.Second, Backlog: 100, HalfLife: time.Minute})
	require.Equal(t, time.Second, a.WaitAt(t0, 0))
	// The backlog pushes the period up linearly, capped at Max.
	require.Equal(t, 5*time.Second, a.WaitAt(t0, 50))
	require.Equal(t, 9*time.Second, a.WaitAt(t0, 1000))
	// With the backlog gone it decays by half per HalfLife.
	require.Equal(t, 5*time.Second, a.WaitAt(t0.Add(time.Minute), 0))
	require.Equal(t, 3*time.Second, a.CurrentAt(t0.Add(2*time.Minute)))
	require.Equal(t, time.Second, a.CurrentAt(t0.Add(time.Hour)))

	// Each rate-limit pause adds half of the range.
	t1 := t0.Add(2 * time.Hour)
	a.PausedAt(t1)
	require.Equal(t, 5*time.Second, a.CurrentAt(t1))
	a.PausedAt(t1)
	a.PausedAt(t1)
	require.Equal(t, 9*time.Second, a.CurrentAt(t1))
	require.Equal(t, 5*time.Second, a.CurrentAt(t1.Add(time.Minute)))
	// A time that goes backwards changes nothing.
	require.Equal(t, 5*time.Second, a.CurrentAt(t1))
}
