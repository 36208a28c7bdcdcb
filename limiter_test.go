package pacer_test

import (
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
			require.NoError(t, r.Add(k, 1))
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
		require.Equal(t, 20*time.Minute, r.Stats().RateLimitWait)
		stop()
	})
}
