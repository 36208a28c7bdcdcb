package storetest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
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

// On an engine too slow for the suite's timings at scale 1, each of whose
// calls takes 100 ms, half of it before it acts, the scenarios still pass:
// those that check the machine's speed run again at a larger scale, every
// duration of theirs stretched alike, until the engine keeps up. The
// bubble's clock makes the engine's slowness exact. Not here: RunnersShare,
// whose subtests cannot run in a bubble, and the scenarios that give a
// volume of calls a time budget.
func TestScenariosStretchForSlowEngine(t *testing.T) {
	skip := []string{"RunnersShare", "ExclusiveConcurrent", "StaleHoldersRefused", "AddRacesClaim", "PerKeyConcurrent"}
	stretch := []string{"DebounceWait", "DebounceQuietPeriodMoves", "DebounceMaxWait", "FairnessDelays",
		"LeaseLapses", "ExtendKeepsLease", "StatsLapsedAndPending", "Retry", "Defer", "InspectReadySince",
		"DelayNotBefore", "DelayOrderKept", "DelayBatchStops", "DelayEndsBurst", "DelayInspect",
		"PerKeyRetry", "PerKeyLapse", "TenantsAhead", "KeyRateSpacing"}
	var stretched []string
	for _, sc := range scenarios {
		if slices.Contains(skip, sc.name) {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &slowMemory{Memory: store.NewMemory(store.MemoryConfig{}), d: 50 * time.Millisecond}
				runScaled(t, sc.run, Harness{Store: s, Queue: "q"})
				s.mu.Lock() // the Runners of Runner scenarios still run
				defer s.mu.Unlock()
				if s.stretched {
					stretched = append(stretched, sc.name)
				}
			})
		})
	}
	require.ElementsMatch(t, stretch, stretched, "the scenarios that ran again, stretched")
}

// slowMemory is a Memory whose Add, Claim, Extend and Finish take d
// before they act and d after. It notes whether a queue of a try at a
// larger scale was used.
type slowMemory struct {
	*store.Memory
	d time.Duration

	mu        sync.Mutex
	stretched bool
}

// slow takes d, notes queue, and returns a func that takes d again.
func (s *slowMemory) slow(queue string) (after func()) {
	time.Sleep(s.d)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stretched = s.stretched || strings.Contains(queue, "/scale")
	return func() { time.Sleep(s.d) }
}

func (s *slowMemory) Add(ctx context.Context, queue, key string, vals [][]byte, p store.AddParams) error {
	defer s.slow(queue)()
	return s.Memory.Add(ctx, queue, key, vals, p)
}

func (s *slowMemory) Claim(ctx context.Context, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	defer s.slow(queue)()
	return s.Memory.Claim(ctx, queue, p)
}

func (s *slowMemory) Extend(ctx context.Context, l store.Lease, ttl time.Duration) error {
	defer s.slow(l.Queue)()
	return s.Memory.Extend(ctx, l, ttl)
}

func (s *slowMemory) Finish(ctx context.Context, l store.Lease, o store.Outcome) (bool, error) {
	defer s.slow(l.Queue)()
	return s.Memory.Finish(ctx, l, o)
}
