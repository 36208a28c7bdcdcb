package adaptive

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestWait(t *testing.T) {
	t0 := time.Unix(1000, 0)
	a := New(time.Second, 9*time.Second, 100, time.Minute)
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
