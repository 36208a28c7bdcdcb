package debounce

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAddWaitPerBurst: each burst waits the quiet period of the Add that
// opened it, Add's being Config.Wait; an Add that joins an open burst does
// not change it.
func TestAddWaitPerBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.Add("default", 1))
		require.NoError(t, k.AddWait("long", 2, 3*time.Second))
		require.NoError(t, k.AddWait("short", 3, 500*ms))
		require.NoError(t, k.AddWait("kept", 4, 2*time.Second))
		require.NoError(t, k.AddWait("shrunk", 5, 400*ms))
		time.Sleep(300 * ms)
		require.NoError(t, k.Add("kept", 6))                  // still 2 s after its last Add
		require.NoError(t, k.AddWait("shrunk", 7, time.Hour)) // still 400 ms
		require.Equal(t, 5, k.Pending())
		time.Sleep(time.Minute)
		require.Equal(t, []fired{
			{At: 500 * ms, Key: "short", Values: []int{3}, First: 0, Last: 0, Count: 1},
			{At: 700 * ms, Key: "shrunk", Values: []int{5, 7}, First: 0, Last: 300 * ms, Count: 2},
			{At: time.Second, Key: "default", Values: []int{1}, First: 0, Last: 0, Count: 1},
			{At: 2300 * ms, Key: "kept", Values: []int{4, 6}, First: 0, Last: 300 * ms, Count: 2},
			{At: 3 * time.Second, Key: "long", Values: []int{2}, First: 0, Last: 0, Count: 1},
		}, r.take())
	})
}

// TestAddWaitMaxWait: MaxWait bounds a burst whatever its quiet period.
func TestAddWaitMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second, MaxWait: 2 * time.Second}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.AddWait("a", 1, 10*time.Second))
		require.NoError(t, k.AddWait("b", 2, forever))
		time.Sleep(time.Minute)
		require.Equal(t, []fired{
			{At: 2 * time.Second, Key: "a", Values: []int{1}, First: 0, Last: 0, Count: 1},
			{At: 2 * time.Second, Key: "b", Values: []int{2}, First: 0, Last: 0, Count: 1},
		}, r.take())
	})
}

func TestAddWaitForever(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.AddWait("a", 1, forever))
		time.Sleep(time.Second)
		require.NoError(t, k.Add("a", 2))
		time.Sleep(1000 * time.Hour)
		require.Empty(t, r.take())
		require.NoError(t, k.Shutdown(context.Background()))
		require.Equal(t, []fired{{At: 1000*time.Hour + time.Second, Key: "a", Values: []int{1, 2}, First: 0, Last: time.Second, Count: 2}}, r.take())
	})
}

func TestAddWaitValidates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		require.EqualError(t, k.AddWait("a", 1, 0), "debounce: AddWait wait must be > 0, got 0s")
		require.EqualError(t, k.AddWait("a", 1, -time.Second), "debounce: AddWait wait must be > 0, got -1s")
		require.Zero(t, k.Pending())
		require.NoError(t, k.Close())
		require.ErrorIs(t, k.AddWait("a", 1, time.Second), ErrClosed)
	})
}

// TestAddWaitShorterAfterFlush reopens a key whose schedule item sits in
// the heap at its old, long deadline with a shorter wait: the new burst
// fires at its own deadline, not at the old item's.
func TestAddWaitShorterAfterFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.AddWait("a", 1, 10*time.Second))
		time.Sleep(5 * time.Second)
		require.NoError(t, k.Add("a", 2)) // due at 15 s: rescheduled at 10 s
		time.Sleep(6 * time.Second)
		require.True(t, k.Flush("a"))
		time.Sleep(time.Second)
		require.NoError(t, k.AddWait("a", 3, time.Second)) // at 12 s
		time.Sleep(time.Minute)
		require.Equal(t, []fired{
			{At: 11 * time.Second, Key: "a", Values: []int{1, 2}, First: 0, Last: 5 * time.Second, Count: 2},
			{At: 13 * time.Second, Key: "a", Values: []int{3}, First: 12 * time.Second, Last: 12 * time.Second, Count: 1},
		}, r.take())
		require.Zero(t, k.Pending())
	})
}

// TestAddWaitShorterLeavesNoFifoOrphanBehind reopens a key whose item is in
// the FIFO with a shorter wait. The item left behind must not pass for the
// key's next burst and hold up the keys queued after it.
func TestAddWaitShorterLeavesNoFifoOrphanBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.AddWait("z", 0, 10*time.Second))
		require.NoError(t, k.AddWait("a", 1, 10*time.Second)) // FIFO: z, a, due at 10 s
		require.True(t, k.Flush("a"))
		require.NoError(t, k.AddWait("a", 2, time.Second)) // due at 1 s
		require.NoError(t, k.AddWait("y", 3, 10200*ms))    // FIFO: z, (a), y
		time.Sleep(9500 * ms)
		require.NoError(t, k.Add("a", 4)) // due at 10.5 s
		time.Sleep(time.Minute)
		require.Equal(t, []fired{
			{At: 0, Key: "a", Values: []int{1}, First: 0, Last: 0, Count: 1},
			{At: time.Second, Key: "a", Values: []int{2}, First: 0, Last: 0, Count: 1},
			{At: 10 * time.Second, Key: "z", Values: []int{0}, First: 0, Last: 0, Count: 1},
			{At: 10200 * ms, Key: "y", Values: []int{3}, First: 0, Last: 0, Count: 1},
			{At: 10500 * ms, Key: "a", Values: []int{4}, First: 9500 * ms, Last: 9500 * ms, Count: 1},
		}, r.take())
	})
}

// TestAddWaitShorterAfterLongerLeavesNoFifoOrphanBehind: the key leaves
// the FIFO for the heap with a longer wait, then a shorter one replaces
// its entry; the FIFO item left behind at the start must still not pass
// for the key's next burst.
func TestAddWaitShorterAfterLongerLeavesNoFifoOrphanBehind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second}, r)
		defer closeKeyed(t, k)
		require.NoError(t, k.AddWait("z", 0, 10*time.Second))
		require.NoError(t, k.AddWait("a", 1, 10*time.Second))
		require.NoError(t, k.AddWait("y", 2, 10200*ms)) // FIFO: z, a, y
		time.Sleep(time.Second)
		require.True(t, k.Flush("a"))
		time.Sleep(time.Second)
		require.NoError(t, k.AddWait("a", 3, 10*time.Second)) // due at 12 s, in the heap
		time.Sleep(time.Second)
		require.True(t, k.Flush("a"))
		time.Sleep(time.Second)
		require.NoError(t, k.AddWait("a", 4, time.Second)) // due at 5 s
		time.Sleep(5500 * ms)
		require.NoError(t, k.Add("a", 5)) // at 9.5 s, due at 10.5 s
		time.Sleep(time.Minute)
		require.Equal(t, []fired{
			{At: time.Second, Key: "a", Values: []int{1}, First: 0, Last: 0, Count: 1},
			{At: 3 * time.Second, Key: "a", Values: []int{3}, First: 2 * time.Second, Last: 2 * time.Second, Count: 1},
			{At: 5 * time.Second, Key: "a", Values: []int{4}, First: 4 * time.Second, Last: 4 * time.Second, Count: 1},
			{At: 10 * time.Second, Key: "z", Values: []int{0}, First: 0, Last: 0, Count: 1},
			{At: 10200 * ms, Key: "y", Values: []int{2}, First: 0, Last: 0, Count: 1},
			{At: 10500 * ms, Key: "a", Values: []int{5}, First: 9500 * ms, Last: 9500 * ms, Count: 1},
		}, r.take())
	})
}
