package ratelimit_test

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/pacerkit/pacer/ratelimit"
)

func newKeyed[K comparable](t *testing.T, cfg ratelimit.KeyedConfig) *ratelimit.Keyed[K] {
	t.Helper()
	k, err := ratelimit.NewKeyed[K](cfg)
	require.NoError(t, err)
	return k
}

func TestKeyedConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  ratelimit.KeyedConfig
		want string
	}{
		{ratelimit.KeyedConfig{}, "ratelimit: KeyedConfig.Rate must be in [1e-9, 1e9], got 0"},
		{ratelimit.KeyedConfig{Rate: 1e-12}, "KeyedConfig.Rate"},
		{ratelimit.KeyedConfig{Rate: 1e-6, Burst: 1e9}, "KeyedConfig.Burst must be at most"},
		{ratelimit.KeyedConfig{Rate: 2e9}, "KeyedConfig.Rate"},
		{ratelimit.KeyedConfig{Rate: 1, Burst: -1}, "KeyedConfig.Burst"},
		{ratelimit.KeyedConfig{Rate: 1, IdleTTL: -1}, "KeyedConfig.IdleTTL"},
	} {
		_, err := ratelimit.NewKeyed[string](tc.cfg)
		require.ErrorContains(t, err, tc.want)
	}
}

// keyModel is the reference: a float token bucket per key, refilled
// lazily, emptied by a pause.
type keyModel struct {
	tokens float64
	last   time.Time
	pause  time.Time
}

// TestKeyedModel drives AllowAt and PauseKey with random operations on a
// few keys and compares every answer with the reference model.
func TestKeyedModel(t *testing.T) {
	for seed := range uint64(20) {
		synctest.Test(t, func(t *testing.T) { keyedModelRun(t, seed) })
	}
}

func keyedModelRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	rate := float64(1 + rng.IntN(50))
	burst := 1 + rng.IntN(5)
	k := newKeyed[int](t, ratelimit.KeyedConfig{Rate: rate, Burst: burst, IdleTTL: time.Duration(1+rng.IntN(3)) * time.Second})
	interval := time.Duration(math.Round(1e9 / rate)) // Keyed's token interval
	models := map[int]*keyModel{}
	model := func(key int, now time.Time) *keyModel {
		m := models[key]
		if m == nil {
			m = &keyModel{tokens: float64(burst), last: now}
			models[key] = m
		}
		m.tokens = min(float64(burst), m.tokens+float64(now.Sub(m.last))/float64(interval))
		m.last = now
		return m
	}
	for step := range 2000 {
		time.Sleep(time.Duration(rng.IntN(int(2 * interval))))
		now := time.Now()
		key := rng.IntN(4)
		if rng.IntN(20) == 0 {
			d := time.Duration(rng.IntN(int(5 * interval)))
			k.PauseKey(key, d)
			m := model(key, now)
			if d > 0 && now.Add(d).After(m.pause) {
				m.pause, m.tokens = now.Add(d), 0
			}
			continue
		}
		n := 1 + rng.IntN(burst+1)
		m := model(key, now)
		want := !now.Before(m.pause) && m.tokens >= float64(n)-1e-9
		if want {
			m.tokens -= float64(n)
		}
		require.Equal(t, want, k.AllowAt(key, now, n), "seed %d step %d key %d n %d tokens %v", seed, step, key, n, m.tokens)
	}
}

// TestKeyedAllowAtMatchesXRate runs sequences of AllowAt with times out of
// order against x/time/rate's Limiter and Keyed, both at 4 tokens/s with a
// burst of 3, and requires the same answers. x/time/rate credits no tokens
// for time running backwards and takes none away: an event at t before the
// last one sees the tokens left at the last one, and t becomes the new last.
// Times are multiples of 1/8 s, so x/time/rate's float tokens are exact.
func TestKeyedAllowAtMatchesXRate(t *testing.T) {
	type allow struct {
		at   time.Duration // after the start
		n    int
		want bool
	}
	ms := time.Millisecond
	tests := []struct {
		name  string
		steps []allow
	}{
		{"back after draining, then forward", []allow{
			{10 * time.Second, 3, true}, {9 * time.Second, 1, false}, {10 * time.Second, 1, false}, {10*time.Second + 250*ms, 1, true},
		}},
		{"back after one token", []allow{
			{10 * time.Second, 1, true}, {5 * time.Second, 2, true}, {5 * time.Second, 1, false},
		}},
		{"no credit until time passes the last event", []allow{
			{10 * time.Second, 3, true}, {10*time.Second + 500*ms, 2, true},
			{10 * time.Second, 1, false}, {10*time.Second + 250*ms, 1, false}, {10*time.Second + 750*ms, 1, true},
		}},
		{"the earlier event becomes the last", []allow{
			{10 * time.Second, 2, true}, {9 * time.Second, 1, true}, {9*time.Second + 500*ms, 2, true},
			{9*time.Second + 500*ms, 1, false}, {9*time.Second + 750*ms, 1, true},
		}},
		{"far back, refused until the last event", []allow{
			{time.Minute, 3, true}, {time.Second, 1, false}, {time.Second + 250*ms, 1, false},
			{time.Minute - 250*ms, 1, false}, {time.Minute + 250*ms, 1, true},
		}},
		{"refused events do not move the last", []allow{
			{10 * time.Second, 3, true}, {2 * time.Second, 1, false}, {10*time.Second + 250*ms, 1, true},
		}},
		{"more than the burst, back in time", []allow{
			{10 * time.Second, 1, true}, {time.Second, 4, false}, {time.Second, 2, true}, {time.Second, 1, false},
		}},
		{"zero events move the last back", []allow{
			{10 * time.Second, 3, true}, {8 * time.Second, 0, true}, {8 * time.Second, 1, false},
			{8*time.Second + 250*ms, 1, true},
		}},
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lim := rate.NewLimiter(4, 3)
			lim.AllowN(start, 0) // start full at the start, as Keyed does
			k := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 4, Burst: 3})
			k.AllowAt("a", start, 0)
			for i, st := range tt.steps {
				at := start.Add(st.at)
				require.Equal(t, st.want, lim.AllowN(at, st.n), "step %d: the table disagrees with x/time/rate", i)
				require.Equal(t, st.want, k.AllowAt("a", at, st.n), "step %d: AllowAt(+%v, %d)", i, st.at, st.n)
			}
		})
	}
}

// TestKeyedAllowAtMatchesXRateRandom compares AllowAt with x/time/rate on
// random sequences of times that often run backwards.
func TestKeyedAllowAtMatchesXRateRandom(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 16))
		lim := rate.NewLimiter(4, 3)
		lim.AllowN(start, 0)
		k := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 4, Burst: 3})
		k.AllowAt("a", start, 0)
		at := start
		for step := range 500 {
			// Steps of -2 s to +1 s in eighths of a second.
			at = at.Add(time.Duration(rng.IntN(25)-16) * time.Second / 8)
			if at.Before(start) {
				at = start
			}
			n := rng.IntN(5)
			want := lim.AllowN(at, n)
			require.Equal(t, want, k.AllowAt("a", at, n), "seed %d step %d: AllowAt(+%v, %d)", seed, step, at.Sub(start), n)
		}
	}
}

func TestKeyedWaitPacesEachKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 10, Burst: 2})
		var wg sync.WaitGroup
		for _, key := range []string{"a", "b", "c"} {
			wg.Go(func() {
				start := time.Now()
				for range 12 {
					require.NoError(t, k.Wait(context.Background(), key))
				}
				require.Equal(t, time.Second, time.Since(start), key)
			})
		}
		wg.Wait()
	})
}

func TestKeyedPauseKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 1, Burst: 1})
		require.True(t, k.Allow("a"))
		var wg sync.WaitGroup
		var sleeper, newcomer, other time.Duration
		waitAt(t, &wg, k.For("a"), 0, &sleeper) // due at 1s
		time.Sleep(500 * time.Millisecond)
		k.For("a").PauseFor(3 * time.Second) // until 3.5s
		k.PauseKey("a", time.Second)         // earlier: ignored
		waitAt(t, &wg, k.For("a"), 1500*time.Millisecond, &newcomer)
		waitAt(t, &wg, k.For("b"), 0, &other)
		wg.Wait()
		require.Zero(t, other, "a pause of one key held another")
		require.ElementsMatch(t, []time.Duration{3500 * time.Millisecond, 4500 * time.Millisecond},
			[]time.Duration{sleeper, newcomer + 500*time.Millisecond})
	})
}

func TestKeyedCancelAndDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 1, Burst: 1})
		require.True(t, k.Allow("a"))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { require.ErrorIs(t, k.Wait(ctx, "a"), context.Canceled) })
		time.Sleep(500 * time.Millisecond)
		cancel()
		wg.Wait()

		dctx, dcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer dcancel()
		require.ErrorIs(t, k.Wait(dctx, "a"), ratelimit.ErrWouldExceedDeadline)

		time.Sleep(500 * time.Millisecond)
		require.True(t, k.Allow("a"), "a cancelled or failed wait kept its token")
		require.False(t, k.Allow("a"))
	})
}

// TestKeyedMemoryFollowsActiveKeys touches a million keys once; after
// IdleTTL passes, only the keys still in use have a bucket and the memory of
// the others is given back.
func TestKeyedMemoryFollowsActiveKeys(t *testing.T) {
	const many, hot = 1_000_000, 1000
	mock := clock.NewMock()
	k := newKeyed[int](t, ratelimit.KeyedConfig{Rate: 10, Burst: 2, IdleTTL: time.Minute, Clock: mock})
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := heap()
	t0 := mock.Now()
	for i := range many {
		if !k.AllowAt(i, t0, 1) {
			t.Fatalf("key %d: a new bucket should be full", i)
		}
	}
	require.Equal(t, many, k.Len())
	full := heap()
	require.Greater(t, full-base, uint64(many*32), "a million buckets should take memory")

	// 59s: still within IdleTTL of being full again (at 0.1s).
	mock.Add(59 * time.Second)
	require.Equal(t, many, k.Len())

	mock.Add(2 * time.Second)
	for i := range hot {
		require.True(t, k.Allow(i))
	}
	require.Equal(t, hot, k.Len())
	after := heap()
	require.Less(t, after-min(after, base), (full-base)/10, "idle buckets were dropped but their memory was kept")

	mock.Add(2 * time.Minute)
	require.Zero(t, k.Len())
	runtime.KeepAlive(k)
}

// TestKeyedHammer: concurrent waits, pauses and sweeps on a few keys. No
// key passes more than its burst plus its rate, or during its pause.
func TestKeyedHammer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, burst = 10, 2
		k := newKeyed[int](t, ratelimit.KeyedConfig{Rate: rate, Burst: burst, IdleTTL: 300 * time.Millisecond})
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var mu sync.Mutex
		passes := map[int][]time.Time{}
		pauses := map[int][][2]time.Time{}
		var wg sync.WaitGroup
		for w := range 12 {
			wg.Go(func() {
				key := w % 3
				for i := 0; ; i++ {
					if (w+i)%17 == 0 {
						mu.Lock()
						d := time.Duration(w*31+i*7) * time.Millisecond % 500
						k.PauseKey(key, d)
						pauses[key] = append(pauses[key], [2]time.Time{time.Now(), time.Now().Add(d)})
						mu.Unlock()
					}
					if i%5 == 0 {
						time.Sleep(time.Duration(i) * 10 * time.Millisecond)
						_ = k.Len()
					}
					if k.Wait(ctx, key) != nil {
						return
					}
					mu.Lock()
					passes[key] = append(passes[key], time.Now())
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start).Seconds()
		for key, ps := range passes {
			require.LessOrEqual(t, float64(len(ps)), burst+rate*elapsed+1e-6, "key %d", key)
			require.Greater(t, len(ps), 5, "key %d", key)
			for _, p := range ps {
				for _, pz := range pauses[key] {
					require.False(t, p.After(pz[0]) && p.Before(pz[1]), "key %d passed at %v during a pause", key, p.Sub(start))
				}
			}
		}
	})
}

// TestKeyedHugeDurations: durations and deadlines beyond the year 2262
// saturate instead of wrapping around.
func TestKeyedHugeDurations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 1, Burst: 1, IdleTTL: math.MaxInt64})
		k.PauseKey("a", math.MaxInt64)
		require.False(t, k.Allow("a"))
		k.PauseKey("a", time.Second) // earlier: ignored
		require.False(t, k.Allow("a"))
		require.True(t, k.Allow("b"))
		time.Sleep(time.Hour)
		require.Equal(t, 2, k.Len(), "a huge IdleTTL wrapped around")

		far, cancel := context.WithDeadline(context.Background(), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
		defer cancel()
		require.True(t, k.Allow("c"))
		start := time.Now()
		require.NoError(t, k.Wait(far, "c"))
		require.Equal(t, time.Second, time.Since(start))
	})
}

// TestKeyedSleepersKeepTheirBucket: a key with sleeping waiters keeps its
// bucket even when IdleTTL is tiny and a pause plus cancelled waiters leave
// a gap before the next sleeper wakes, so newcomers cannot get a fresh,
// full bucket next to the sleepers and together exceed the rate.
func TestKeyedSleepersKeepTheirBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := newKeyed[string](t, ratelimit.KeyedConfig{Rate: 1, Burst: 1, IdleTTL: time.Nanosecond})
		start := time.Now()
		var mu sync.Mutex
		var passes []time.Duration
		pass := func() {
			mu.Lock()
			passes = append(passes, time.Since(start))
			mu.Unlock()
		}
		var wg sync.WaitGroup
		ctx, cancel := context.WithCancel(context.Background())
		for i := range 10 { // due at 0s, 1s, ..., 9s
			wctx := context.Background()
			if i >= 1 && i <= 5 {
				wctx = ctx
			}
			wg.Go(func() {
				if k.Wait(wctx, "a") == nil {
					pass()
				}
			})
			synctest.Wait() // reserve in order
		}
		time.Sleep(200 * time.Millisecond)
		cancel() // the waiters due at 1s..5s leave; 6s..9s sleep on
		time.Sleep(300 * time.Millisecond)
		k.PauseKey("a", 100*time.Millisecond) // empties the bucket at 0.5s
		time.Sleep(1100 * time.Millisecond)   // 1.6s
		k.Len()                               // a sweep is due
		time.Sleep(100 * time.Millisecond)
		wg.Go(func() { // newcomers from 1.7s to 10s
			for time.Since(start) < 10*time.Second {
				require.NoError(t, k.Wait(context.Background(), "a"))
				pass()
			}
		})
		wg.Wait()
		for _, p := range passes {
			n := 0
			for _, q := range passes {
				if q >= 500*time.Millisecond && q <= p {
					n++
				}
			}
			if p >= 500*time.Millisecond {
				require.LessOrEqual(t, float64(n), 1+(p-500*time.Millisecond).Seconds()+1e-9, "rate exceeded at %v: %v", p, passes)
			}
		}
	})
}
