package ratelimit_test

import (
	"encoding/json"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/ratelimit"
)

func TestStatsJSON(t *testing.T) {
	t.Parallel()
	until := time.Date(2025, 3, 1, 13, 0, 5, 0, time.FixedZone("CET", 3600))
	for _, c := range []struct {
		name  string
		stats ratelimit.Stats
		json  string
	}{
		{"zero", ratelimit.Stats{}, `{"waits":0,"pauses":0,"rate":0,"wait_time_seconds":0}`},
		{"full", ratelimit.Stats{Waits: 4, WaitTime: 1500 * time.Millisecond, Pauses: 1, Rate: 2.5, PausedUntil: until},
			`{"waits":4,"pauses":1,"rate":2.5,"wait_time_seconds":1.5,"paused_until":"2025-03-01T12:00:05Z"}`},
		// A JSON number cannot hold an unlimited rate.
		{"unlimited", ratelimit.Stats{Rate: math.Inf(1)}, `{"waits":0,"pauses":0,"rate":null,"wait_time_seconds":0}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := json.Marshal(c.stats)
			require.NoError(t, err)
			require.Equal(t, c.json, string(got))

			var back ratelimit.Stats
			require.NoError(t, json.Unmarshal(got, &back))
			require.True(t, c.stats.PausedUntil.Equal(back.PausedUntil), "paused_until %v", back.PausedUntil)
			back.PausedUntil = c.stats.PausedUntil
			require.Equal(t, c.stats, back)
		})
	}
}

// A bucket's own Stats marshal, paused and at an unlimited rate alike.
func TestBucketStatsJSON(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, rate := range []float64{2, math.Inf(1)} {
			b := newBucket(t, ratelimit.BucketConfig{Rate: rate, Burst: 1})
			start := time.Now()
			b.PauseFor(3 * time.Second)
			require.NoError(t, b.Wait(t.Context()))
			got, err := json.Marshal(b.Stats())
			require.NoError(t, err)
			var back ratelimit.Stats
			require.NoError(t, json.Unmarshal(got, &back))
			require.Equal(t, rate, back.Rate, "%s", got)
			require.Equal(t, 3*time.Second, back.WaitTime, "%s", got)
			require.True(t, back.PausedUntil.Equal(start.Add(3*time.Second)), "%s", got)
		}
	})
}
