package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// The scale after a try that was too slow at least doubles, and grows
// until the duration that was too short is twice what it had to outlast;
// past maxScale there is none.
func TestNextScale(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		scale       int
		took, limit time.Duration
		next        int
		ok          bool
	}{
		{1, 80 * ms, 80 * ms, 2, true},
		{1, 102 * ms, 80 * ms, 4, true},  // 320 ms ≥ 204 ms
		{1, 800 * ms, 80 * ms, 32, true}, // 2.56 s ≥ 1.6 s
		{2, 160 * ms, 160 * ms, 4, true}, // 320 ms ≥ 320 ms (the limit at scale 1: 80 ms)
		{2, 200 * ms, 160 * ms, 8, true}, // 640 ms ≥ 400 ms
		{32, 2560 * ms, 2560 * ms, 64, true},
		{32, 3 * time.Second, 2560 * ms, 0, false}, // would need 128
		{32, 3 * time.Second, 1280 * ms, 0, false}, // would need 128
		{64, 1300 * ms, 1280 * ms, 0, false},
		{1, 10 * time.Second, 80 * ms, 0, false},
	} {
		next, ok := nextScale(c.scale, tooSlow{took: c.took, limit: c.limit})
		require.Equal(t, c.ok, ok, "%+v", c)
		if ok {
			require.Equal(t, c.next, next, "%+v", c)
		}
	}
}

// A scenario that was too slow runs again, on a queue of its own, with
// tick and late stretched by the scale, until a try ends without slow.
func TestRunScaled(t *testing.T) {
	type try struct {
		scale      int
		q          string
		tick, late time.Duration
	}
	var tries []try
	m := store.NewMemory(store.MemoryConfig{})
	t.Run("scenario", func(t *testing.T) {
		runScaled(t, func(f *fixture) {
			tries = append(tries, try{f.scale, f.q, f.tick, f.late})
			if f.scale < 8 {
				f.slow(3*tick, 2*f.tick, "a test of the scale") // 60 ms, where 40 ms at scale 1
			}
			f.add("k", "1")
		}, Harness{Store: m, Queue: "q"})
	})
	require.Equal(t, []try{
		{1, "q", tick, Late},
		{4, "q/scale4", 4 * tick, 4 * Late},
		{8, "q/scale8", 8 * tick, 8 * Late},
	}, tries)
	for q, values := range map[string]int{"q": 0, "q/scale4": 0, "q/scale8": 1} {
		st, err := m.Stats(t.Context(), q)
		require.NoError(t, err)
		require.Equal(t, values, st.Values, "queue %s: only the try that was not too slow got to add", q)
	}
}
