package pacer_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/window"
)

func daily(t *testing.T, start, end string) *window.Schedule {
	t.Helper()
	w, err := window.Daily(start, end, time.UTC)
	require.NoError(t, err)
	return &w
}

// A key outside its own window is deferred until it opens, while a key
// without a window runs at once; a batch still running when its key's
// window closes is cut there (its ctx ends with window.ErrOutside) and
// runs again, as the same attempt, when the window next opens. The
// bubble starts at midnight UTC.
func TestKeyWindowDefersAndCuts(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		nine := daily(t, "09:00", "10:00")
		var causes []error
		rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
			if key == "a" && len(causes) == 0 {
				<-ctx.Done() // works past the close
				causes = append(causes, context.Cause(ctx))
				return ctx.Err()
			}
			return nil
		})
		r := newRunner(t, on(pacer.Config[string, int]{
			KeyWindow: func(key string) *window.Schedule {
				if key == "a" {
					return nine
				}
				return nil
			},
		}), rc)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "b", 2))
		stop := start(t, r)

		x, err := r.Explain(t.Context(), "a")
		require.NoError(t, err)
		require.Equal(t, time.Date(2000, 1, 1, 9, 0, 0, 0, time.UTC), x.KeyWindowClosedUntil.UTC())
		require.Contains(t, x.String(), "it is outside its window until 09:00:00Z")
		x, err = r.Explain(t.Context(), "b")
		require.NoError(t, err)
		require.Zero(t, x.KeyWindowClosedUntil)

		time.Sleep(48 * time.Hour)
		require.Equal(t, []call{
			{"b", []int{2}, 0, 1},
			{"a", []int{1}, 9 * time.Hour, 1},
			{"a", []int{1}, 33 * time.Hour, 1}, // cut at 10:00: the attempt did not count
		}, rc.Calls())
		require.Len(t, causes, 1)
		require.ErrorIs(t, causes[0], window.ErrOutside)
		require.Equal(t, uint64(2), stats(t, r).KeyWindowed, "one deferral, one cut")
		require.Equal(t, 1, rc.count(pacer.EventSkipped))
		require.Equal(t, 1, rc.count(pacer.EventRetry))
		stop()
	})
}

// Per-key window and limit compose with the Runner's Window and
// Limiter: a batch runs when all four let it. The Window (08:00-12:00)
// holds everyone until 08:00; then a's own window (10:00-11:00) defers
// it to 10:00, b's second value waits for b's next token (one an hour)
// until 09:00, and c waits for the Limiter's token (one per 10 minutes)
// until 08:10.
func TestKeyGatesComposeWithWindowAndLimiter(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		limiter, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: 1.0 / 600, Burst: 1})
		require.NoError(t, err)
		perKey := newKeyed(t, ratelimit.KeyedConfig{Rate: 1.0 / 3600, Burst: 1})
		aWindow := daily(t, "10:00", "11:00")
		rc := newRecorder(nil)
		r := newRunner(t, on(pacer.Config[string, int]{
			MaxBatch: 1,
			Window:   daily(t, "08:00", "12:00"),
			Limiter:  limiter,
			KeyLimit: perKey,
			KeyWindow: func(key string) *window.Schedule {
				if key == "a" {
					return aWindow
				}
				return nil
			},
		}), rc)
		for _, kv := range []struct {
			k string
			v int
		}{{"a", 1}, {"b", 2}, {"b", 3}, {"c", 4}} {
			require.NoError(t, r.Add(t.Context(), kv.k, kv.v))
		}
		stop := start(t, r)
		time.Sleep(8*time.Hour + 20*time.Minute)
		x, err := r.Explain(t.Context(), "b")
		require.NoError(t, err)
		require.Equal(t, time.Date(2000, 1, 1, 9, 0, 0, 0, time.UTC), x.KeyTokenAt.UTC())
		require.True(t, strings.HasSuffix(x.String(), `key "b" is waiting for its key's token until 09:00:00Z`), x.String())

		time.Sleep(4 * time.Hour)
		require.Equal(t, []call{
			{"b", []int{2}, 8 * time.Hour, 1},
			{"c", []int{4}, 8*time.Hour + 10*time.Minute, 1},
			{"b", []int{3}, 9 * time.Hour, 1},
			{"a", []int{1}, 10 * time.Hour, 1},
		}, rc.Calls())
		st := stats(t, r)
		require.Equal(t, uint64(1), st.KeyLimited)
		require.Equal(t, uint64(1), st.KeyWindowed)
		stop()
	})
}
