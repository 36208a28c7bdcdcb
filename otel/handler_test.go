package pacerotel_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/pacerkit/pacer"
	pacerotel "github.com/pacerkit/pacer/otel"
	"github.com/pacerkit/pacer/store"
)

var errBoom = errors.New("boom")

// run starts r, lets fake time pass for d, and shuts r down.
func run[K comparable, V any](t *testing.T, r *pacer.Runner[K, V], d time.Duration) {
	t.Helper()
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	time.Sleep(d)
	require.NoError(t, r.Shutdown(ctx))
	require.NoError(t, <-done)
}

// byAttempt returns the spans of key's calls, in order.
func spansOf(spans []sdktrace.ReadOnlySpan, key string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if attrs(s)["pacer.key"] == key {
			out = append(out, s)
		}
	}
	return out
}

func TestSpanPerCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		cfg := pacer.Config[string, int]{
			MaxBatch:  1,
			Retry:     pacer.Backoff{Attempts: 3, Initial: time.Second},
			Exhausted: pacer.ExhaustedHold,
		}
		tc := s.config
		tc.Queue, tc.Key = "hooks", true
		tel, err := pacerotel.New(cfg, tc)
		require.NoError(t, err)
		var held []string
		cfg.OnDrop = func(key string, _ []int, err error) { held = append(held, key) }
		r, err := pacer.New(cfg, tel.Handler(func(ctx context.Context, key string, _ []int) error {
			require.True(t, trace.SpanFromContext(ctx).IsRecording(), "the handler runs in its span")
			if key == "bad" {
				return errBoom
			}
			return nil
		}))
		require.NoError(t, err)
		ctx := context.Background()
		require.NoError(t, r.Add(ctx, "good", 1))
		require.NoError(t, r.Add(ctx, "bad", 2))
		run(t, r, time.Minute)
		require.Equal(t, []string{"bad"}, held, "Shutdown hands the held key to OnDrop")

		spans := s.ended()
		good := spansOf(spans, "good")
		require.Len(t, good, 1)
		sp := good[0]
		require.Equal(t, "process hooks", sp.Name())
		require.Equal(t, trace.SpanKindConsumer, sp.SpanKind())
		require.Equal(t, map[string]any{"pacer.queue": "hooks", "pacer.attempt": int64(1), "pacer.size": int64(1),
			"pacer.key": "good", "pacer.outcome": "ok"}, attrs(sp))
		require.Equal(t, codes.Unset, sp.Status().Code)
		require.Empty(t, sp.Events())

		bad := spansOf(spans, "bad")
		require.Len(t, bad, 3)
		for i, sp := range bad {
			want := "retry"
			if i == 2 {
				want = "held"
			}
			a := attrs(sp)
			require.Equal(t, int64(i+1), a["pacer.attempt"])
			require.Equal(t, want, a["pacer.outcome"], "attempt %d", i+1)
			require.Equal(t, codes.Error, sp.Status().Code)
			require.Equal(t, "boom", sp.Status().Description)
			require.Len(t, sp.Events(), 1)
			require.Equal(t, "exception", sp.Events()[0].Name)
		}
		require.Equal(t, time.Second, bad[1].StartTime().Sub(bad[0].EndTime()), "the spans are on the Runner's clock")
	})
}

func TestKeyOnlyWhenAsked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		cfg := pacer.Config[int, int]{}
		tel, err := pacerotel.New(cfg, s.config)
		require.NoError(t, err)
		r, err := pacer.New(cfg, tel.Handler(func(context.Context, int, []int) error { return nil }))
		require.NoError(t, err)
		require.NoError(t, r.Add(context.Background(), 7, 1))
		require.NoError(t, r.Add(context.Background(), 7, 2))
		run(t, r, time.Second)
		spans := s.ended()
		require.Len(t, spans, 1)
		require.Equal(t, "process", spans[0].Name(), "a Runner without a Store has no Name")
		require.Equal(t, map[string]any{"pacer.attempt": int64(1), "pacer.size": int64(2), "pacer.outcome": "ok"}, attrs(spans[0]))
	})
}

func TestDroppedOutcomes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		// The default Attempts (0, which pacer reads as 25): the 25th call
		// is the last, whatever pacer's default becomes.
		cfg := pacer.Config[string, int]{MaxBatch: 1}
		tc := s.config
		tc.Key = true
		tel, err := pacerotel.New(cfg, tc)
		require.NoError(t, err)
		var drops []string
		cfg.OnDrop = func(key string, _ []int, err error) { drops = append(drops, key) }
		r, err := pacer.New(cfg, tel.Handler(func(_ context.Context, key string, _ []int) error {
			if key == "permanent" {
				return pacer.Permanent(fmt.Errorf("wrapped: %w", errBoom))
			}
			return fmt.Errorf("plain: %w", errBoom)
		}))
		require.NoError(t, err)
		require.NoError(t, r.Add(context.Background(), "permanent", 1))
		require.NoError(t, r.Add(context.Background(), "exhausted", 1))
		run(t, r, 3*time.Hour)
		require.ElementsMatch(t, []string{"permanent", "exhausted"}, drops)

		spans := s.ended()
		p := spansOf(spans, "permanent")
		require.Len(t, p, 1)
		require.Equal(t, "dropped", attrs(p[0])["pacer.outcome"])
		e := spansOf(spans, "exhausted")
		require.Len(t, e, 25, "pacer's default Attempts")
		for _, sp := range e[:24] {
			require.Equal(t, "retry", attrs(sp)["pacer.outcome"])
		}
		require.Equal(t, "dropped", attrs(e[24])["pacer.outcome"])
	})
}

func TestPanicEndsSpan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		cfg := pacer.Config[string, int]{Retry: pacer.Backoff{Attempts: 2}}
		tel, err := pacerotel.New(cfg, s.config)
		require.NoError(t, err)
		var calls atomic.Int32
		r, err := pacer.New(cfg, tel.Handler(func(context.Context, string, []int) error {
			if calls.Add(1) == 1 {
				panic("oops")
			}
			return nil
		}))
		require.NoError(t, err)
		require.NoError(t, r.Add(context.Background(), "k", 1))
		run(t, r, time.Minute)
		spans := s.ended()
		require.Len(t, spans, 2)
		require.Equal(t, "retry", attrs(spans[0])["pacer.outcome"], "the Runner recovers the panic and retries")
		require.Equal(t, codes.Error, spans[0].Status().Code)
		require.Equal(t, "pacer: handler panicked", spans[0].Status().Description)
		require.Equal(t, "ok", attrs(spans[1])["pacer.outcome"])
	})
}

// lapsing is a Memory store whose first renewal fails, as when another
// instance took the key.
type lapsing struct {
	*store.Memory
	failed atomic.Bool
}

func (l *lapsing) Extend(ctx context.Context, lease store.Lease, ttl time.Duration) error {
	if l.failed.CompareAndSwap(false, true) {
		return store.ErrLeaseLost
	}
	return l.Memory.Extend(ctx, lease, ttl)
}

func TestLeaseLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		st := &lapsing{Memory: store.NewMemory(store.MemoryConfig{})}
		cfg := pacer.Config[string, int]{Store: st, Name: "jobs", LeaseTTL: time.Second}
		tel, err := pacerotel.New(cfg, s.config)
		require.NoError(t, err)
		r, err := pacer.New(cfg, tel.Handler(func(ctx context.Context, _ string, _ []int) error {
			if pacer.Attempt(ctx) == 1 {
				<-ctx.Done() // until the renewal fails
				return context.Cause(ctx)
			}
			return nil
		}))
		require.NoError(t, err)
		require.NoError(t, r.Add(context.Background(), "k", 1))
		run(t, r, time.Minute)

		spans := s.ended()
		require.Len(t, spans, 2)
		first, second := attrs(spans[0]), attrs(spans[1])
		require.Equal(t, "lease_lost", first["pacer.outcome"])
		require.Equal(t, "process jobs", spans[0].Name())
		require.Equal(t, "jobs", first["pacer.queue"], "the queue is the Runner's Name")
		require.Equal(t, codes.Error, spans[0].Status().Code)
		require.ErrorIs(t, pacer.ErrLeaseLost, store.ErrLeaseLost)
		require.Equal(t, "ok", second["pacer.outcome"])
		require.Equal(t, int64(2), second["pacer.attempt"])
		require.Less(t, first["pacer.fence"].(int64), second["pacer.fence"].(int64), "each lease has a larger fence")

		m := s.collect(t)
		lost, ok := point[int64](t, m["pacer.leases.lost"], queueAttr("jobs"))
		require.True(t, ok)
		require.Equal(t, int64(1), lost)
	})
}

func TestNoopProvidersCostNothing(t *testing.T) {
	cfg := pacer.Config[string, int]{}
	tel, err := pacerotel.New(cfg, pacerotel.Config{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()})
	require.NoError(t, err)
	h := pacer.Handler[string, int](func(context.Context, string, []int) error { return nil })
	require.Equal(t, reflect.ValueOf(h).Pointer(), reflect.ValueOf(tel.Handler(h)).Pointer(), "Handler returns h itself")
	next := func(pacer.Event[string]) {}
	require.Equal(t, reflect.ValueOf(next).Pointer(), reflect.ValueOf(tel.OnEvent(next)).Pointer(), "OnEvent returns next itself")
	require.Nil(t, tel.OnEvent(nil))

	// Only the tracer is a no-op: the handler is still timed.
	s := newSDK(t)
	tel, err = pacerotel.New(cfg, pacerotel.Config{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: s.config.MeterProvider})
	require.NoError(t, err)
	require.NoError(t, tel.Handler(h)(context.Background(), "k", nil))
	_, ok := s.collect(t)["pacer.batch.duration"]
	require.True(t, ok)
}
