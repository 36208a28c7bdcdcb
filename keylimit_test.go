package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
)

func newKeyed(t *testing.T, cfg ratelimit.KeyedConfig) *ratelimit.Keyed[string] {
	t.Helper()
	k, err := ratelimit.NewKeyed[string](cfg)
	require.NoError(t, err)
	return k
}

// One slow key and 50 others share 2 workers under a key limit of one
// token a minute. The slow key's next batches are deferred to its token
// times and no worker sleeps on it: the other keys, added one a second,
// each start as soon as they are added, and are all done long before the
// slow key's second token. (A worker held by the slow key would leave
// the other alone with calls of 1.5 s arriving every second.)
func TestKeyLimitSlowKeyHoldsNoWorker(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		perKey := newKeyed(t, ratelimit.KeyedConfig{Rate: 1.0 / 60, Burst: 1})
		r, rc := runSlowKey(t, on(pacer.Config[string, int]{Workers: 2, MaxBatch: 1, KeyLimit: perKey}))
		st := stats(t, r)
		require.Equal(t, uint64(2), st.KeyLimited, "one deferral per token")
		require.Equal(t, 2, rc.count(pacer.EventSkipped))
	})
}

// runSlowKey runs a Runner of cfg, whose key limit allows one batch of a
// key a minute, through 3 values of the key "slow" and 50 other keys
// added one a second, whose calls take 1.5 s, and checks that the slow
// key ran off its token times while the other keys each started as soon
// as they were added: no worker was held by the slow key.
func runSlowKey(t *testing.T, cfg pacer.Config[string, int]) (*pacer.Runner[string, int], *recorder) {
	t.Helper()
	rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
		if key != "slow" {
			time.Sleep(1500 * time.Millisecond)
		}
		return nil
	})
	r := newRunner(t, cfg, rc)
	for i := range 3 {
		require.NoError(t, r.Add(t.Context(), "slow", i))
	}
	stop := start(t, r)
	for i := range 50 {
		require.NoError(t, r.Add(t.Context(), fmt.Sprintf("fast%02d", i), i))
		time.Sleep(time.Second)
	}
	time.Sleep(3 * time.Minute)
	stop()

	var slow []time.Duration
	fast := 0
	for _, c := range rc.Calls() {
		if c.Key == "slow" {
			slow = append(slow, c.At)
			continue
		}
		require.Equal(t, time.Duration(c.Batch[0])*time.Second, c.At, "%s started late: a worker was held", c.Key)
		fast++
	}
	require.Equal(t, 50, fast)
	require.Equal(t, []time.Duration{0, time.Minute, 2 * time.Minute}, slow, "the slow key ran off its token times")
	require.Equal(t, uint64(53), stats(t, r).Handled)
	require.False(t, rc.overlap)
	return r, rc
}

// A RetryAfter pauses the key's limit for that key alone: another key
// of the same limit runs on, and the paused key's retry comes after the
// pause.
func TestKeyLimitRetryAfterPausesOnlyItsKey(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		perKey := newKeyed(t, ratelimit.KeyedConfig{Rate: 10, Burst: 10})
		rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
			if key == "a" && pacer.Attempt(ctx) == 1 {
				return pacer.RetryAfter(errors.New("429 for this account"), time.Hour)
			}
			return nil
		})
		r := newRunner(t, on(pacer.Config[string, int]{KeyLimit: perKey}), rc)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		stop := start(t, r)

		wa, err := perKey.PeekKey(t.Context(), "a")
		require.NoError(t, err)
		require.Equal(t, time.Hour, wa, "a's limit was not paused")
		require.NoError(t, r.Add(t.Context(), "b", 2))
		time.Sleep(time.Second)
		wb, err := perKey.PeekKey(t.Context(), "b")
		require.NoError(t, err)
		require.Zero(t, wb, "b's limit was paused")

		time.Sleep(2 * time.Hour)
		require.Equal(t, []call{
			{"a", []int{1}, 0, 1},
			{"b", []int{2}, 0, 1},
			{"a", []int{1}, time.Hour, 2},
		}, rc.Calls())
		stop()
	})
}

// A key limit that fails defers the batch by Retry.Initial, using no
// attempt, and the batch runs once the limit answers again.
func TestKeyLimitFailureDefers(t *testing.T) {
	bothPaths(t, func(t *testing.T, on path) {
		g := &flakyGate{fails: 2}
		rc := newRecorder(nil)
		r := newRunner(t, on(pacer.Config[string, int]{KeyLimit: g, Retry: pacer.Backoff{Initial: time.Second}}), rc)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		stop := start(t, r)
		time.Sleep(time.Minute)
		require.Equal(t, []call{{"a", []int{1}, 2 * time.Second, 1}}, rc.Calls())
		stop()
	})
}

// flakyGate fails its first fails calls, then lets every event through.
type flakyGate struct{ fails int }

func (g *flakyGate) TakeKey(context.Context, string) (time.Duration, error) {
	if g.fails > 0 {
		g.fails--
		return 0, errors.New("limit unreachable")
	}
	return 0, nil
}

func (g *flakyGate) PeekKey(context.Context, string) (time.Duration, error) { return 0, nil }

func (g *flakyGate) PauseKeyFor(context.Context, string, time.Duration) error { return nil }

func TestKeyLimitNilPointer(t *testing.T) {
	var k *ratelimit.Keyed[string]
	_, err := pacer.New(pacer.Config[string, int]{KeyLimit: k}, func(context.Context, string, []int) error { return nil })
	require.EqualError(t, err, "pacer: Config.KeyLimit is a nil *ratelimit.Keyed[string]: set a limiter made by its constructor, or leave the field nil")
}
