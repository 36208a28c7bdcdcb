package pacer_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/window"
)

// A burst of values for one key makes exactly one handler call with every
// value, once the key has been quiet for Debounce.
func TestBurstMakesOneCall(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		rc := newRecorder(nil)
		r := newRunner(t, on(pacer.Config[string, int]{Debounce: time.Second}), rc)
		stop := start(t, r)
		for i := range 5 {
			require.NoError(t, r.Add(t.Context(), "u1", i))
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(5 * time.Second)
		require.Equal(t, []call{{"u1", []int{0, 1, 2, 3, 4}, seconds(1.4), 1}}, rc.Calls())
		stop()
		require.Empty(t, rc.Drops())
	})
}

// Keys are served by the time they became ready: U1, U2, U1 makes U2 ready
// first (its quiet period ended first), and with several workers one key
// never runs twice at once.
func TestReadyOrderAndExclusivity(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		rc := newRecorder(func(context.Context, string, []int) error {
			time.Sleep(500 * time.Millisecond)
			return nil
		})
		r := newRunner(t, on(pacer.Config[string, int]{Debounce: time.Second, Workers: 4}), rc)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "U1", 1))
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, r.Add(t.Context(), "U2", 2))
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, r.Add(t.Context(), "U1", 3))
		time.Sleep(3 * time.Second)
		require.Equal(t, []call{
			{"U2", []int{2}, seconds(1.1), 1},
			{"U1", []int{1, 3}, seconds(1.2), 1},
		}, rc.Calls())

		// A stream of values for two keys while four workers run: each
		// key's calls never overlap and every value is handled once.
		for i := range 200 {
			require.NoError(t, r.Add(t.Context(), []string{"U1", "U2"}[i%2], 100+i))
			time.Sleep(37 * time.Millisecond)
		}
		time.Sleep(5 * time.Second) // with a Store, Shutdown leaves what is stored
		stop()
		require.False(t, rc.overlap, "two calls of one key ran at once")
		var got []int
		for _, c := range rc.Calls()[2:] {
			got = append(got, c.Batch...)
		}
		require.ElementsMatch(t, seq(100, 300), got)
	})
}

// Values that arrive while their key is being handled make it run exactly
// once more, from the tail: behind keys that became ready meanwhile.
func TestRerunAtTail(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		rc := newRecorder(func(_ context.Context, key string, batch []int) error {
			if batch[0] == 1 {
				time.Sleep(10 * time.Second)
			}
			return nil
		})
		r := newRunner(t, on(pacer.Config[string, int]{}), rc)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		time.Sleep(time.Second)
		require.NoError(t, r.Add(t.Context(), "a", 2))
		time.Sleep(time.Second)
		require.NoError(t, r.Add(t.Context(), "b", 10))
		time.Sleep(time.Second)
		require.NoError(t, r.Add(t.Context(), "a", 3))
		time.Sleep(20 * time.Second)
		require.Equal(t, []call{
			{"a", []int{1}, 0, 1},
			{"b", []int{10}, 10 * time.Second, 1},
			{"a", []int{2, 3}, 10 * time.Second, 1},
		}, rc.Calls())
		require.Equal(t, 1, rc.count(pacer.EventRerun))
		require.Equal(t, uint64(1), stats(t, r).Reruns)
		stop()
	})
}

// A key that never goes quiet is still handled every MaxWait.
func TestMaxWaitServesBusyKey(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		rc := newRecorder(nil)
		r := newRunner(t, on(pacer.Config[string, int]{Debounce: time.Second, MaxWait: 5 * time.Second}), rc)
		stop := start(t, r)
		time.Sleep(100 * time.Millisecond)
		for i := range 60 { // every 300 ms from 0.1 s to 17.8 s
			require.NoError(t, r.Add(t.Context(), "busy", i))
			time.Sleep(300 * time.Millisecond)
		}
		time.Sleep(5 * time.Second)
		stop()
		calls := rc.Calls()
		var ats []time.Duration
		var got []int
		for _, c := range calls {
			ats = append(ats, c.At)
			got = append(got, c.Batch...)
		}
		require.Equal(t, []time.Duration{seconds(5.1), seconds(10.2), seconds(15.3), seconds(18.8)}, ats)
		require.Equal(t, seq(0, 60), got)
	})
}

// A 429 answered with PauseAll makes the key wait and pauses the shared
// bucket for everyone; the other keys are served when the pause ends, ahead
// of the key that failed, and the key's retry follows.
func TestPauseAllPausesLimiter(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: math.Inf(1)})
		require.NoError(t, err)
		rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
			if key == "a" && pacer.Attempt(ctx) == 1 {
				return pacer.PauseAll(errors.New("429 Too Many Requests"), 10*time.Second)
			}
			return nil
		})
		r := newRunner(t, on(pacer.Config[string, int]{Limiter: bucket}), rc)
		for _, k := range []string{"a", "b", "c"} {
			require.NoError(t, r.Add(t.Context(), k, 1))
		}
		stop := start(t, r)
		time.Sleep(time.Minute)
		require.Equal(t, []call{
			{"a", []int{1}, 0, 1},
			{"b", []int{1}, 10 * time.Second, 1},
			{"c", []int{1}, 10 * time.Second, 1},
			{"a", []int{1}, 10 * time.Second, 2},
		}, rc.Calls())
		require.Equal(t, uint64(1), bucket.Stats().Pauses)
		st := stats(t, r)
		require.Equal(t, uint64(1), st.Retries)
		require.Equal(t, 10*time.Second, st.RateLimitWait)
		stop()
	})
}

// Strict mode: a failing value is retried before any later value of its key
// while other keys flow; once its attempts are used up it is dropped
// (OnDrop) and the key goes on.
func TestStrictExhaustedDrop(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		rc := newRecorder(func(_ context.Context, _ string, batch []int) error {
			if batch[0] == 2 {
				return errors.New("boom")
			}
			return nil
		})
		cfg := on(strictConfig(pacer.ExhaustedDrop))
		r := newRunner(t, cfg, rc)
		addStrict(t, r)
		stop := start(t, r)
		time.Sleep(time.Minute)
		require.Equal(t, strictPrefix(), rc.Calls()[:6])
		require.Equal(t, []call{{"a", []int{3}, 3 * time.Second, 1}}, rc.Calls()[6:])
		require.Equal(t, []call{{"a", []int{2}, 3 * time.Second, 0}}, rc.Drops())
		require.EqualError(t, rc.dropErr[0], "boom")
		// After a1, b10 and the drop of a2 the key had values left.
		require.Equal(t, uint64(3), stats(t, r).Reruns)
		require.Equal(t, 3, rc.count(pacer.EventRerun))
		if cfg.Store != nil {
			require.Equal(t, 1, stats(t, r).Dead, "the store keeps the batch as a dead letter")
		}
		stop()
	})
}

// Strict mode with ExhaustedHold: the key is held with its value at the
// head and its later values behind it until Release.
func TestStrictExhaustedHold(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		failing := true
		rc := newRecorder(func(_ context.Context, _ string, batch []int) error {
			if batch[0] == 2 && failing {
				return errors.New("boom")
			}
			return nil
		})
		r := newRunner(t, on(strictConfig(pacer.ExhaustedHold)), rc)
		addStrict(t, r)
		stop := start(t, r)
		time.Sleep(10 * time.Second)
		require.Equal(t, strictPrefix(), rc.Calls())
		require.Empty(t, rc.Drops())
		st := stats(t, r)
		require.Equal(t, 1, st.Held)
		require.Equal(t, 2, st.Queued)
		require.Equal(t, 1, rc.count(pacer.EventHeld))

		ok, err := r.Release(t.Context(), "b")
		require.NoError(t, err)
		require.False(t, ok)
		failing = false
		ok, err = r.Release(t.Context(), "a")
		require.NoError(t, err)
		require.True(t, ok)
		time.Sleep(time.Second)
		require.Equal(t, []call{
			{"a", []int{2}, 10 * time.Second, 1},
			{"a", []int{3}, 10 * time.Second, 1},
		}, rc.Calls()[6:])
		require.Zero(t, stats(t, r).Held)
		stop()
		require.Empty(t, rc.Drops())
	})
}

func strictConfig(policy pacer.Exhausted) pacer.Config[string, int] {
	return pacer.Config[string, int]{
		MaxBatch:  1,
		Retry:     pacer.Backoff{Initial: time.Second, Multiplier: 2, Attempts: 3},
		Exhausted: policy,
	}
}

func addStrict(t *testing.T, r *pacer.Runner[string, int]) {
	for _, kv := range []struct {
		k string
		v int
	}{{"a", 1}, {"a", 2}, {"a", 3}, {"b", 10}, {"b", 11}} {
		require.NoError(t, r.Add(t.Context(), kv.k, kv.v))
	}
}

// strictPrefix is what both strict tests see up to the third failure of
// value 2: b flows between a's values and during a's retries.
func strictPrefix() []call {
	return []call{
		{"a", []int{1}, 0, 1},
		{"b", []int{10}, 0, 1},
		{"a", []int{2}, 0, 1},
		{"b", []int{11}, 0, 1},
		{"a", []int{2}, time.Second, 2},
		{"a", []int{2}, 3 * time.Second, 3},
	}
}

// No batch starts outside the window; a running handler's ctx ends when the
// window closes, with cause window.ErrOutside.
func TestWindow(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		// The bubble's clock starts at midnight UTC.
		w, err := window.Daily("01:00", "02:00", time.UTC)
		require.NoError(t, err)
		var cause error
		var ended time.Duration
		rc := newRecorder(nil)
		rc.fn = func(ctx context.Context, key string, _ []int) error {
			if key == "long" {
				<-ctx.Done()
				cause, ended = context.Cause(ctx), time.Since(rc.t0)
			}
			return nil // stopped cleanly, e.g. after reporting how far it got
		}
		r := newRunner(t, on(pacer.Config[string, int]{Window: &w, Workers: 2}), rc)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "long", 1))
		time.Sleep(30 * time.Minute)
		require.NoError(t, r.Add(t.Context(), "short", 2))
		time.Sleep(3 * time.Hour)
		// Both workers wait for the opening, so either may start first.
		require.ElementsMatch(t, []call{
			{"long", []int{1}, time.Hour, 1},
			{"short", []int{2}, time.Hour, 1},
		}, rc.Calls())
		require.ErrorIs(t, cause, window.ErrOutside)
		require.Equal(t, 2*time.Hour, ended)
		require.Equal(t, 2, rc.count(pacer.EventSkipped))

		// Added after the close, a value waits for the next day's opening.
		require.NoError(t, r.Add(t.Context(), "late", 3))
		time.Sleep(24 * time.Hour)
		require.Equal(t, call{"late", []int{3}, 25 * time.Hour, 1}, rc.Calls()[2])
		stop()
	})
}

// A handler cut short by the window close that returns an error runs again
// when the window reopens, and that does not count as an attempt.
func TestWindowCloseDefersBatch(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		w, err := window.Daily("01:00", "02:00", time.UTC)
		require.NoError(t, err)
		calls := 0
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error {
			if calls++; calls == 1 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		})
		cfg := pacer.Config[string, int]{Window: &w}
		cfg.Retry.Attempts = 1 // a counted failure would be dropped
		r := newRunner(t, on(cfg), rc)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "k", 1))
		time.Sleep(30 * time.Hour)
		require.Equal(t, []call{
			{"k", []int{1}, time.Hour, 1},
			{"k", []int{1}, 25 * time.Hour, 1},
		}, rc.Calls())
		require.Empty(t, rc.Drops())
		stop()
	})
}

// A panicking handler is recovered: the batch is retried like any failure,
// the error is a *pacer.PanicError, and the worker goes on with other keys.
func TestPanicIsSurvived(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
			if key == "bad" && pacer.Attempt(ctx) == 1 {
				panic("kaboom")
			}
			return nil
		})
		cfg := pacer.Config[string, int]{Retry: pacer.Backoff{Initial: time.Second}}
		r := newRunner(t, on(cfg), rc)
		require.NoError(t, r.Add(t.Context(), "bad", 1))
		require.NoError(t, r.Add(t.Context(), "good", 2))
		stop := start(t, r)
		time.Sleep(5 * time.Second)
		require.Equal(t, []call{
			{"bad", []int{1}, 0, 1},
			{"good", []int{2}, 0, 1},
			{"bad", []int{1}, time.Second, 2},
		}, rc.Calls())
		var retry pacer.Event[string]
		for _, e := range rc.events {
			if e.Kind == pacer.EventRetry {
				retry = e
			}
		}
		var pe *pacer.PanicError
		require.ErrorAs(t, retry.Err, &pe)
		require.Equal(t, "kaboom", pe.Value)
		require.NotEmpty(t, pe.Stack)
		stop()
	})
}

// A Permanent error drops the batch at once (OnDrop, EventDropped).
func TestPermanentDrops(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		rc := newRecorder(func(_ context.Context, _ string, batch []int) error {
			if batch[0] == 1 {
				return pacer.Permanent(errors.New("bad payload"))
			}
			return nil
		})
		r := newRunner(t, on(pacer.Config[string, int]{MaxBatch: 1}), rc)
		require.NoError(t, r.Add(t.Context(), "k", 1))
		require.NoError(t, r.Add(t.Context(), "k", 2))
		stop := start(t, r)
		stop()
		require.Equal(t, []call{{"k", []int{1}, 0, 1}, {"k", []int{2}, 0, 1}}, rc.Calls())
		require.Equal(t, []call{{Key: "k", Batch: []int{1}}}, rc.Drops())
		require.EqualError(t, rc.dropErr[0], "permanent: bad payload")
		require.Equal(t, 1, rc.count(pacer.EventDropped))
		require.Equal(t, uint64(1), stats(t, r).Dropped)
	})
}

// Ordinary errors retry with the configured exponential backoff.
func TestBackoffSchedule(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error {
			if pacer.Attempt(ctx) < 5 {
				return errors.New("transient")
			}
			return nil
		})
		cfg := pacer.Config[string, int]{Retry: pacer.Backoff{Initial: 250 * time.Millisecond, Max: 2 * time.Second, Multiplier: 4}}
		r := newRunner(t, on(cfg), rc)
		require.NoError(t, r.Add(t.Context(), "k", 1))
		stop := start(t, r)
		time.Sleep(time.Minute)
		var ats []time.Duration
		for _, c := range rc.Calls() {
			ats = append(ats, c.At)
		}
		// 250 ms, then 1 s, then capped at 2 s twice.
		require.Equal(t, []time.Duration{0, seconds(0.25), seconds(1.25), seconds(3.25), seconds(5.25)}, ats)
		require.Equal(t, uint64(4), stats(t, r).Retries)
		stop()
	})
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// The Limiter gives one token per handler call, retries included.
func TestLimiterOneTokenPerCall(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 1, Burst: 1})
		require.NoError(t, err)
		rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
			if key == "a" && pacer.Attempt(ctx) == 1 {
				return errors.New("transient")
			}
			return nil
		})
		r := newRunner(t, on(pacer.Config[string, int]{Limiter: bucket, Workers: 3, Retry: pacer.Backoff{Initial: time.Millisecond}}), rc)
		for _, k := range []string{"a", "b", "c"} {
			require.NoError(t, r.Add(t.Context(), k, 1))
		}
		stop := start(t, r)
		time.Sleep(time.Minute)
		var ats []time.Duration
		for _, c := range rc.Calls() {
			ats = append(ats, c.At)
		}
		require.Equal(t, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}, ats)
		stop()
	})
}

// In strict mode each value starts at attempt 1, however many workers race
// for its key the moment the value before it ends.
func TestStrictAttemptStartsOverPerValue(t *testing.T) {
	for range 20 {
		bothPaths(t, func(t *testing.T, on path) {
			rc := newRecorder(func(ctx context.Context, _ string, _ []int) error {
				if pacer.Attempt(ctx) == 1 {
					return errors.New("fail once")
				}
				return nil
			})
			r := newRunner(t, on(pacer.Config[string, int]{MaxBatch: 1, Workers: 4, Retry: pacer.Backoff{Initial: time.Millisecond, Attempts: 2}}), rc)
			for i := range 50 {
				require.NoError(t, r.Add(t.Context(), "k", i))
			}
			stop := start(t, r)
			time.Sleep(time.Minute)
			stop()
			require.Empty(t, rc.Drops())
			var want []call
			for _, c := range rc.Calls() {
				want = append(want, call{Key: "k", Batch: []int{len(want) / 2}, At: c.At, Attempt: 1 + len(want)%2})
			}
			require.Len(t, want, 100)
			require.Equal(t, want, rc.Calls())
		})
	}
}
