package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// readyDelays returns the Delay of the EventReady events for key.
func (rc *recorder) readyDelays(key string) []time.Duration {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var ds []time.Duration
	for _, e := range rc.events {
		if e.Kind == pacer.EventReady && e.Key == key {
			ds = append(ds, e.Delay)
		}
	}
	return ds
}

// With Adaptive the quiet period grows with the backlog and after a
// rate-limit pause, and decays back when the pressure is gone.
func TestAdaptiveDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
			if key == "429" && pacer.Attempt(ctx) <= 2 {
				return pacer.PauseAll(errors.New("429"), time.Second)
			}
			return nil
		})
		cfg := pacer.Config[string, int]{
			Debounce: time.Second,
			Adaptive: pacer.Adaptive{Max: 4 * time.Second, Backlog: 10, HalfLife: time.Minute},
		}
		r := newRunner(t, cfg, rc)
		for i := range 10 { // not running yet: a backlog of 10 builds up
			require.NoError(t, r.Add(t.Context(), fmt.Sprint("k", i), i))
		}
		time.Sleep(2 * time.Second)
		require.Equal(t, 10, stats(t, r).Queued)
		require.NoError(t, r.Add(t.Context(), "x", 1))
		require.Equal(t, 4*time.Second, stats(t, r).Debounce)
		time.Sleep(5 * time.Second)
		require.Equal(t, []time.Duration{4 * time.Second}, rc.readyDelays("x"))

		stop := start(t, r)
		time.Sleep(10 * time.Minute) // backlog gone, the pressure decays
		require.NoError(t, r.Add(t.Context(), "y", 1))
		time.Sleep(5 * time.Second)
		require.Equal(t, []time.Duration{time.Second}, rc.readyDelays("y"))

		// Each 429 raises the quiet period half-way to Max; two take it
		// there (it has decayed a little, one second later).
		require.NoError(t, r.Add(t.Context(), "429", 1))
		time.Sleep(2500 * time.Millisecond) // ready after 1 s, fails at 1 s and 2 s
		level := (0.5*math.Exp2(-1.0/60) + 0.5) * math.Exp2(-0.5/60)
		target := stats(t, r).Debounce
		require.InDelta(t, 1+3*level, target.Seconds(), 1e-6)
		require.NoError(t, r.Add(t.Context(), "z", 1))
		time.Sleep(5 * time.Second)
		require.Equal(t, []time.Duration{target}, rc.readyDelays("z"))
		stop()
	})
}

// TestAdaptiveBurstWaitsTheTarget: a burst waits the adaptive target
// itself, not the nearest of a few fixed steps, and a value that joins an
// open burst leaves its quiet period as it was.
func TestAdaptiveBurstWaitsTheTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(nil)
		cfg := pacer.Config[string, int]{
			Debounce: time.Second,
			Adaptive: pacer.Adaptive{Max: 4 * time.Second, Backlog: 10, HalfLife: time.Minute},
		}
		r := newRunner(t, cfg, rc)
		require.NoError(t, r.Add(t.Context(), "early", 0)) // no backlog yet: 1 s
		// Not running yet: a backlog of 5 builds up.
		for i := range 4 {
			require.NoError(t, r.Add(t.Context(), fmt.Sprint("k", i), i))
		}
		time.Sleep(2 * time.Second)
		require.Equal(t, 5, stats(t, r).Queued)
		require.NoError(t, r.Add(t.Context(), "x", 1)) // 1 s + 3 s * 5/10
		time.Sleep(time.Second)
		require.NoError(t, r.Add(t.Context(), "x", 2)) // joins the burst: 2.5 s from here
		time.Sleep(5 * time.Second)
		require.Equal(t, []time.Duration{time.Second}, rc.readyDelays("early"))
		require.Equal(t, []time.Duration{3500 * time.Millisecond}, rc.readyDelays("x"))
		start(t, r)()
	})
}

// With a Store, Adaptive reads the backlog from the engine, and each Add
// passes the quiet period of its moment to the engine, which debounces.
func TestAdaptiveDebounceOnStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := store.NewMemory(store.MemoryConfig{})
		for i := range 10 { // another instance's backlog
			require.NoError(t, mem.Add(t.Context(), "q", fmt.Sprint("k", i), [][]byte{[]byte("0")}, store.AddParams{}))
		}
		rc := newRecorder(nil)
		r := newRunner(t, pacer.Config[string, int]{
			Store: mem, Name: "q", Debounce: time.Second,
			Adaptive: pacer.Adaptive{Max: 4 * time.Second, Backlog: 10, HalfLife: time.Minute},
		}, rc)
		require.NoError(t, r.Add(t.Context(), "x", 1))
		require.Equal(t, 4*time.Second, stats(t, r).Debounce)
		stop := start(t, r)
		time.Sleep(10 * time.Second)
		stop()
		calls := rc.Calls()
		require.Len(t, calls, 11)
		require.Equal(t, call{"x", []int{1}, 4 * time.Second, 1}, calls[10])
	})
}
