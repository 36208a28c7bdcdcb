package debounce

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPeekShowsTheOpenBurstAndItsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second, MaxWait: 2500 * ms}, r)
		defer closeKeyed(t, k)
		t0 := time.Now()

		_, ok := k.Peek("a")
		require.False(t, ok, "no burst yet")

		require.NoError(t, k.Add("a", 1))
		got, ok := k.Peek("a")
		require.True(t, ok)
		require.Equal(t, Open{Count: 1, First: t0, Last: t0, Deadline: t0.Add(time.Second)}, got)

		time.Sleep(800 * ms)
		require.NoError(t, k.Add("a", 2))
		time.Sleep(800 * ms)
		require.NoError(t, k.Add("a", 3)) // at 1.6 s: quiet until 2.6 s, past the max wait at 2.5 s
		got, ok = k.Peek("a")
		require.True(t, ok)
		require.Equal(t, Open{Count: 3, First: t0, Last: t0.Add(1600 * ms), Deadline: t0.Add(2500 * ms), MaxWait: true}, got)
		_, ok = k.Peek("b")
		require.False(t, ok, "another key")

		time.Sleep(time.Second)
		require.Len(t, r.take(), 1)
		_, ok = k.Peek("a")
		require.False(t, ok, "the burst fired")
	})
}

func TestPeekWithAddWaitAndLeading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		k := newKeyed(t, Config{Wait: time.Second, Leading: true}, r)
		defer closeKeyed(t, k)
		t0 := time.Now()
		require.NoError(t, k.AddWait("a", 1, 3*time.Second)) // leads: fires at once
		require.Len(t, r.take(), 1)
		got, ok := k.Peek("a")
		require.True(t, ok, "the burst that led is open until its deadline")
		require.Equal(t, Open{Count: 1, First: t0, Last: t0, Deadline: t0.Add(3 * time.Second)}, got)
		require.NoError(t, k.Add("a", 2))
		got, _ = k.Peek("a")
		require.Equal(t, 2, got.Count)
	})
}
