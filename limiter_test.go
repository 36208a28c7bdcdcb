package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/window"
)

// A window that closes while a batch waits for the Limiter keeps the
// batch's token: when the window opens again the batch starts without
// taking a second one, so the next key finds the bucket full.
func TestWindowCloseKeepsLimiterToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One token per 20 minutes; the window is open 10 minutes a day.
		bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 1.0 / (20 * 60), Burst: 1})
		require.NoError(t, err)
		w, err := window.Daily("00:00", "00:10", time.UTC)
		require.NoError(t, err)
		rc := newRecorder(nil)
		r := newRunner(t, pacer.Config[string, int]{Limiter: bucket, Window: &w}, rc)
		for _, k := range []string{"a", "b", "c"} {
			require.NoError(t, r.Add(t.Context(), k, 1))
		}
		stop := start(t, r)
		time.Sleep(72 * time.Hour)
		// b got its token at 00:20, after the close, and starts when the
		// window opens the next day; c takes the token that refilled
		// meanwhile.
		require.Equal(t, []call{
			{"a", []int{1}, 0, 1},
			{"b", []int{1}, 24 * time.Hour, 1},
			{"c", []int{1}, 24 * time.Hour, 1},
		}, rc.Calls())
		require.Equal(t, 20*time.Minute, stats(t, r).RateLimitWait)
		stop()
	})
}

// RetryAfter delays its own key only: another key sharing the Limiter runs
// at once, and the Limiter is not paused.
func TestRetryAfterDelaysOnlyItsKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: math.Inf(1)})
		require.NoError(t, err)
		rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
			if key == "a" && pacer.Attempt(ctx) == 1 {
				return pacer.RetryAfter(errors.New("receiver down"), time.Hour)
			}
			return nil
		})
		r := newRunner(t, pacer.Config[string, int]{Limiter: bucket}, rc)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "b", 1))
		stop := start(t, r)
		time.Sleep(2 * time.Hour)
		require.Equal(t, []call{
			{"a", []int{1}, 0, 1},
			{"b", []int{1}, 0, 1},
			{"a", []int{1}, time.Hour, 2},
		}, rc.Calls())
		require.Zero(t, bucket.Stats().Pauses)
		require.Zero(t, stats(t, r).RateLimitWait)
		stop()
	})
}

// The adaptive quiet period follows the shared pauses, not the delays of
// single keys.
func TestAdaptiveFollowsPauseAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
			switch {
			case pacer.Attempt(ctx) > 1:
				return nil
			case key == "retry":
				return pacer.RetryAfter(errors.New("receiver down"), time.Second)
			case key == "pause":
				return pacer.PauseAll(errors.New("429"), time.Second)
			}
			return nil
		})
		cfg := pacer.Config[string, int]{
			Debounce: time.Second,
			Adaptive: pacer.Adaptive{Max: 3 * time.Second, HalfLife: time.Hour},
		}
		r := newRunner(t, cfg, rc)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "retry", 1))
		time.Sleep(5 * time.Second)
		require.Equal(t, time.Second, stats(t, r).Debounce)
		require.NoError(t, r.Add(t.Context(), "pause", 1))
		time.Sleep(1500 * time.Millisecond) // fails at 1 s
		require.InDelta(t, 2, stats(t, r).Debounce.Seconds(), 1e-3)
		stop()
	})
}

func TestPauseAllError(t *testing.T) {
	require.Nil(t, pacer.PauseAll(nil, time.Second))
	base := errors.New("429")
	require.ErrorIs(t, pacer.PauseAll(base, time.Second), base)
	require.EqualError(t, pacer.PauseAll(base, time.Second), "pause all for 1s: 429")
}

// A handler that returns ratelimit.CheckResponse's error for a 429 pauses
// the Limiter for every key for its Retry-After, as PauseAll does; without
// a Retry-After the key retries with the Backoff and nothing is paused.
func TestLimitErrorPausesAll(t *testing.T) {
	for _, tc := range []struct {
		retryAfter string
		bWaits     time.Duration // before key b runs
		aRetries   time.Duration // when key a runs again
		pauses     uint64
	}{
		{retryAfter: "30", bWaits: 30 * time.Second, aRetries: 30 * time.Second, pauses: 1},
		{retryAfter: "", bWaits: 0, aRetries: 5 * time.Second, pauses: 0},
	} {
		synctest.Test(t, func(t *testing.T) {
			bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: math.Inf(1)})
			require.NoError(t, err)
			rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
				if key == "a" && pacer.Attempt(ctx) == 1 {
					resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
					if tc.retryAfter != "" {
						resp.Header.Set("Retry-After", tc.retryAfter)
					}
					return fmt.Errorf("GET /a: %w", ratelimit.CheckResponse(resp))
				}
				return nil
			})
			cfg := pacer.Config[string, int]{Limiter: bucket, Retry: pacer.Backoff{Initial: 5 * time.Second}}
			r := newRunner(t, cfg, rc)
			require.NoError(t, r.Add(t.Context(), "a", 1))
			require.NoError(t, r.Add(t.Context(), "b", 1))
			stop := start(t, r)
			time.Sleep(time.Minute)
			want := []call{{"a", []int{1}, 0, 1}, {"b", []int{1}, tc.bWaits, 1}, {"a", []int{1}, tc.aRetries, 2}}
			require.Equal(t, want, rc.Calls(), "Retry-After %q", tc.retryAfter)
			require.Equal(t, tc.pauses, bucket.Stats().Pauses)
			stop()
		})
	}
}

// A shared pause holds even when the batch that asked for it used up its
// attempts and is dropped.
func TestPauseAllOnLastAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bucket, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: math.Inf(1)})
		require.NoError(t, err)
		rc := newRecorder(func(_ context.Context, key string, _ []int) error {
			if key == "a" {
				return pacer.PauseAll(errors.New("429 Too Many Requests"), time.Hour)
			}
			return nil
		})
		r := newRunner(t, pacer.Config[string, int]{Limiter: bucket, Retry: pacer.Backoff{Attempts: 1}}, rc)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "b", 1))
		stop := start(t, r)
		time.Sleep(2 * time.Hour)
		require.Equal(t, []call{{"a", []int{1}, 0, 1}, {"b", []int{1}, time.Hour, 1}}, rc.Calls())
		require.Equal(t, []call{{"a", []int{1}, 0, 0}}, rc.Drops())
		stop()
	})
}
