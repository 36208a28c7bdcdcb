package pacerotel_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/pacerkit/pacer"
	pacerotel "github.com/pacerkit/pacer/otel"
)

// TestStatsMetrics checks that each Stats field reaches its instrument.
func TestStatsMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		cfg := pacer.Config[string, int]{MaxBatch: 1, Retry: pacer.Backoff{Attempts: 2, Initial: time.Second}}
		tc := s.config
		tc.Queue = "q"
		tel, err := pacerotel.New(cfg, tc)
		require.NoError(t, err)
		r, err := pacer.New(cfg, tel.Handler(func(_ context.Context, key string, _ []int) error {
			if key == "bad" {
				return errBoom
			}
			return nil
		}))
		require.NoError(t, err)
		reg, err := tel.Observe(r)
		require.NoError(t, err)
		defer func() { require.NoError(t, reg.Unregister()) }()
		ctx := context.Background()
		for i := range 3 {
			require.NoError(t, r.Add(ctx, "good", i))
		}
		require.NoError(t, r.Add(ctx, "bad", 9))
		run(t, r, time.Minute)
		st, err := r.Stats(ctx)
		require.NoError(t, err)
		require.Equal(t, uint64(1), st.Retries)

		m := s.collect(t)
		q := queueAttr("q")
		for name, want := range map[string]uint64{
			"pacer.values.received": st.Received, "pacer.values.handled": st.Handled,
			"pacer.values.dropped": st.Dropped, "pacer.values.refused": st.Refused,
			"pacer.batches": st.Batches, "pacer.batches.retried": st.Retries, "pacer.reruns": st.Reruns,
		} {
			got, ok := point[int64](t, m[name], q)
			require.True(t, ok, name)
			require.Equal(t, int64(want), got, name)
			require.True(t, m[name].(metricdata.Sum[int64]).IsMonotonic, name)
		}
		require.Equal(t, uint64(4), st.Received)
		for _, name := range []string{"pacer.values", "pacer.queued", "pacer.in_flight", "pacer.pending", "pacer.retrying", "pacer.held", "pacer.blocked.keys", "pacer.blocked.values", "pacer.dead"} {
			got, ok := point[int64](t, m[name], q)
			require.True(t, ok, name)
			require.Zero(t, got, name)
		}
		wait, ok := point[float64](t, m["pacer.rate_limit.wait"], q)
		require.True(t, ok)
		require.Zero(t, wait)

		hist := m["pacer.batch.duration"].(metricdata.Histogram[float64])
		counts := map[string]uint64{}
		for _, p := range hist.DataPoints {
			o, _ := p.Attributes.Value("pacer.outcome")
			counts[o.AsString()] = p.Count
			queue, _ := p.Attributes.Value("pacer.queue")
			require.Equal(t, "q", queue.AsString())
		}
		require.Equal(t, map[string]uint64{"ok": 3, "retry": 1, "dropped": 1}, counts)
	})
}

// TestBlockedKeys follows Hook0's FIFO subscriptions: keys whose batch
// fails block the values behind them; the gauges say how many, how long
// the oldest has been blocked and its attempt, and give series of their
// own to the BlockedKeys keys blocked longest only. The handler wrapper
// tells which keys block; OnEvent adds the values behind them.
func TestBlockedKeys(t *testing.T) {
	t.Run("events", func(t *testing.T) { testBlockedKeys(t, true) })
	t.Run("handler", func(t *testing.T) { testBlockedKeys(t, false) })
}

func testBlockedKeys(t *testing.T, events bool) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		cfg := pacer.Config[string, int]{
			Debounce:  time.Second, // each key's two values are queued together
			MaxBatch:  1,
			Retry:     pacer.Backoff{Attempts: 3, Initial: time.Minute, Max: time.Minute},
			Exhausted: pacer.ExhaustedHold,
		}
		tc := s.config
		tc.Queue, tc.BlockedKeys = "hooks", 2
		tel, err := pacerotel.New(cfg, tc)
		require.NoError(t, err)
		var heldEvents atomic.Int32
		if events {
			cfg.OnEvent = tel.OnEvent(func(e pacer.Event[string]) {
				if e.Kind == pacer.EventHeld {
					heldEvents.Add(1)
				}
			})
		}
		var healed sync.Map
		r, err := pacer.New(cfg, tel.Handler(func(_ context.Context, key string, _ []int) error {
			if _, ok := healed.Load(key); key != "ok" && !ok {
				return errBoom
			}
			return nil
		}))
		require.NoError(t, err)
		reg, err := tel.Observe(r)
		require.NoError(t, err)
		defer func() { require.NoError(t, reg.Unregister()) }()

		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		// sub-1 fails first, at 1 s, sub-2 ten seconds later, sub-3 ten more.
		for i, key := range []string{"sub-1", "sub-2", "sub-3"} {
			require.NoError(t, r.Add(ctx, key, 1))
			require.NoError(t, r.Add(ctx, key, 2)) // behind the failing one
			require.NoError(t, r.Add(ctx, "ok", i))
			time.Sleep(10 * time.Second)
		}
		time.Sleep(15 * time.Second) // 44 s after sub-1's first failure
		synctest.Wait()

		m := s.collect(t)
		q := queueAttr("hooks")
		keys, _ := point[int64](t, m["pacer.blocked.keys"], q)
		require.Equal(t, int64(3), keys)
		age, _ := point[float64](t, m["pacer.blocked.oldest.age"], q)
		require.Equal(t, 44.0, age)
		attempt, _ := point[int64](t, m["pacer.blocked.oldest.attempt"], q)
		require.Equal(t, int64(1), attempt)
		require.Equal(t, 2, points[float64](m["pacer.key.blocked.age"]), "two keys only")
		for key, want := range map[string]float64{"sub-1": 44, "sub-2": 34} {
			a := []attribute.KeyValue{q, attribute.String("pacer.key", key), attribute.String("pacer.state", "retrying")}
			got, ok := point[float64](t, m["pacer.key.blocked.age"], a...)
			require.True(t, ok, key)
			require.Equal(t, want, got, key)
			n, _ := point[int64](t, m["pacer.key.blocked.values"], a...)
			if events {
				require.Equal(t, int64(2), n, "%s: the failing value and the one behind it", key)
			} else {
				require.Equal(t, int64(1), n, "%s: the failing batch", key)
			}
		}

		// Two minutes on, every key used up its 3 attempts and is held.
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		m = s.collect(t)
		attempt, _ = point[int64](t, m["pacer.blocked.oldest.attempt"], q)
		require.Equal(t, int64(3), attempt)
		held := []attribute.KeyValue{q, attribute.String("pacer.key", "sub-1"), attribute.String("pacer.state", "held")}
		age, ok := point[float64](t, m["pacer.key.blocked.age"], held...)
		require.True(t, ok)
		require.Equal(t, 164.0, age, "blocked since its first failure, not since it was held")

		// sub-1 heals and is released: sub-2 becomes the oldest.
		healed.Store("sub-1", true)
		ok, err = r.Release(ctx, "sub-1")
		require.NoError(t, err)
		require.True(t, ok)
		synctest.Wait()
		m = s.collect(t)
		keys, _ = point[int64](t, m["pacer.blocked.keys"], q)
		require.Equal(t, int64(2), keys)
		age, _ = point[float64](t, m["pacer.blocked.oldest.age"], q)
		require.Equal(t, 154.0, age)
		_, ok = point[float64](t, m["pacer.key.blocked.age"], held...)
		require.False(t, ok, "sub-1's series is gone")
		require.Equal(t, 2, points[float64](m["pacer.key.blocked.age"]))

		stop()
		require.ErrorIs(t, <-done, context.Canceled)
		require.NoError(t, r.Shutdown(context.Background()))
		if events {
			require.Equal(t, int32(3), heldEvents.Load(), "the user's own OnEvent still runs")
		}
	})
}

// A Stats that fails reports nothing for that collection.
func TestObserveStatsError(t *testing.T) {
	s := newSDK(t)
	tel, err := pacerotel.New(pacer.Config[string, int]{}, s.config)
	require.NoError(t, err)
	reg, err := tel.Observe(failing{})
	require.NoError(t, err)
	defer func() { require.NoError(t, reg.Unregister()) }()
	var rm metricdata.ResourceMetrics
	require.ErrorContains(t, s.reader.Collect(context.Background(), &rm), "down")
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			require.NotEqual(t, "pacer.values.received", m.Name)
		}
	}
}

type failing struct{}

func (failing) Stats(context.Context) (pacer.Stats, error) { return pacer.Stats{}, errors.New("down") }
