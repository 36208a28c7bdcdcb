package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// A Remote's deadline is Life after its claim, and its own: two Remotes
// made one after the other share nothing.
func TestNewRemote(t *testing.T) {
	t0 := time.Now()
	a := NewRemote(store.Lease{Key: "a", Fence: 1}, t0, 3*time.Second)
	b := NewRemote(store.Lease{Key: "b", Fence: 2}, t0.Add(time.Second), 3*time.Second)
	require.Equal(t, t0.Add(2690*time.Millisecond), a.Deadline.At())
	require.True(t, a.Deadline.Renewed(t0.Add(time.Second), t0.Add(time.Second)))
	require.Equal(t, t0.Add(3690*time.Millisecond), a.Deadline.At())
	require.Equal(t, t0.Add(3690*time.Millisecond), b.Deadline.At())
	require.True(t, b.Deadline.Renewed(t0.Add(2*time.Second), t0.Add(2*time.Second)))
	require.Equal(t, t0.Add(3690*time.Millisecond), a.Deadline.At(), "b's renewal leaves a's deadline")
	require.Equal(t, "a", a.Lease.Key)
	require.Equal(t, "b", b.Lease.Key)
	require.Equal(t, 1.0, testing.AllocsPerRun(100, func() { a = NewRemote(store.Lease{}, t0, time.Second) }))
}
