package ratelimit_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
)

func newBucket(t *testing.T, cfg ratelimit.BucketConfig) *ratelimit.Bucket {
	t.Helper()
	b, err := ratelimit.NewBucket(cfg)
	require.NoError(t, err)
	return b
}

func TestBucketWaitPaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBucket(t, ratelimit.BucketConfig{Rate: 10, Burst: 2})
		start := time.Now()
		for range 12 {
			require.NoError(t, b.Wait(context.Background()))
		}
		// two from the burst, ten more at 100ms each
		require.Equal(t, time.Second, time.Since(start))
	})
}
