package pacer_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
)

// A delay meaning "forever" never comes due: a RetryAfter of
// math.MaxInt64, or a backoff whose growth passes the range of a Duration,
// makes no further call within a thousand hours, where a wrapped deadline
// would retry in a hot loop.
func TestForeverDelays(t *testing.T) {
	forever := time.Duration(math.MaxInt64)
	for _, tc := range []struct {
		name  string
		retry pacer.Backoff
		err   error
		calls []time.Duration
	}{
		{"RetryAfter", pacer.Backoff{}, pacer.RetryAfter(errors.New("429"), forever), []time.Duration{0}},
		{"Backoff", pacer.Backoff{Initial: time.Millisecond, Multiplier: 1e13, Max: forever}, errors.New("down"), []time.Duration{0, time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				rc := newRecorder(func(context.Context, string, []int) error {
					if calls++; calls > 10 {
						return pacer.Permanent(errors.New("hot loop")) // fail fast
					}
					return tc.err
				})
				r := newRunner(t, pacer.Config[string, int]{Retry: tc.retry}, rc)
				done := make(chan error, 1)
				go func() { done <- r.Run(context.Background()) }()
				require.NoError(t, r.Add(t.Context(), "k", 1))
				time.Sleep(1000 * time.Hour)
				var ats []time.Duration
				for _, c := range rc.Calls() {
					ats = append(ats, c.At)
				}
				// assert, not require: the Runner must still be shut down.
				assert.Equal(t, tc.calls, ats)

				// Waiting forever for the retry, a graceful Shutdown would
				// never end: give up at once.
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				require.ErrorIs(t, r.Shutdown(ctx), context.Canceled)
				require.NoError(t, <-done)
				if len(ats) < 10 {
					require.Equal(t, []call{{Key: "k", Batch: []int{1}, At: 1000 * time.Hour}}, rc.Drops())
				}
			})
		})
	}
}
