package pacerotel_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/pacerkit/pacer"
	pacerotel "github.com/pacerkit/pacer/otel"
)

// A call's span links the spans of the Adds whose values its batch
// carries, each once.
func TestLinksToAdds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		cfg := pacer.Config[string, int]{Debounce: time.Second}
		tel, err := pacerotel.New(cfg, s.config)
		require.NoError(t, err)
		cfg.Carry = tel.Carry()
		r, err := pacer.New(cfg, tel.Handler(func(context.Context, string, []int) error { return nil }))
		require.NoError(t, err)

		tr := s.config.TracerProvider.Tracer("web")
		req1, span1 := tr.Start(context.Background(), "POST /hooks")
		req2, span2 := tr.Start(context.Background(), "POST /hooks")
		require.NoError(t, r.Add(req1, "k", 1))
		require.NoError(t, r.Add(req2, "k", 2))
		require.NoError(t, r.Add(req1, "k", 3))                 // the same request again
		require.NoError(t, r.Add(context.Background(), "k", 4)) // no span: nothing carried
		span1.End()
		span2.End()
		run(t, r, time.Minute)

		var call sdktrace.ReadOnlySpan
		for _, sp := range s.ended() {
			if sp.Name() == "process" {
				call = sp
			}
		}
		require.NotNil(t, call)
		require.Equal(t, int64(4), attrs(call)["pacer.size"])
		var linked []trace.SpanContext
		for _, l := range call.Links() {
			linked = append(linked, l.SpanContext.WithRemote(false))
		}
		require.Equal(t, []trace.SpanContext{span1.SpanContext(), span2.SpanContext()}, linked)
		require.NotEqual(t, span1.SpanContext().TraceID(), call.SpanContext().TraceID(), "the call starts a trace of its own")
	})
}

// A batch of more distinct Adds than a span links counts the others.
func TestLinksBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSDK(t)
		cfg := pacer.Config[string, int]{}
		tel, err := pacerotel.New(cfg, s.config)
		require.NoError(t, err)
		cfg.Carry = tel.Carry()
		r, err := pacer.New(cfg, tel.Handler(func(context.Context, string, []int) error { return nil }))
		require.NoError(t, err)
		tr := s.config.TracerProvider.Tracer("web")
		for i := range 200 {
			ctx, span := tr.Start(context.Background(), "add")
			require.NoError(t, r.Add(ctx, "k", i))
			span.End()
		}
		run(t, r, time.Minute) // Run starts after the Adds: one batch of 200
		calls := 0
		for _, sp := range s.ended() {
			if sp.Name() == "process" {
				calls++
				require.Len(t, sp.Links(), 128)
				require.Equal(t, int64(72), attrs(sp)["pacer.links.dropped"])
			}
		}
		require.Equal(t, 1, calls)
	})
}

// Carry carries nothing for a ctx without a span context, and is nil while
// no span would record.
func TestCarryNothing(t *testing.T) {
	s := newSDK(t)
	tel, err := pacerotel.New(pacer.Config[string, int]{}, s.config)
	require.NoError(t, err)
	carry := tel.Carry()
	require.Nil(t, carry(context.Background()))
	ctx, span := s.config.TracerProvider.Tracer("web").Start(context.Background(), "req")
	defer span.End()
	require.Len(t, carry(ctx), 26, "the stored cost of a trace context")

	off, err := pacerotel.New(pacer.Config[string, int]{}, pacerotel.Config{TracerProvider: tracenoop.NewTracerProvider()})
	require.NoError(t, err)
	require.Nil(t, off.Carry(), "the Runner carries nothing")
}

// A span links each Add once however many of its values the batch holds,
// in a small batch and in a large one.
func TestLinksOncePerAdd(t *testing.T) {
	for _, adds := range []int{3, 20} {
		t.Run(fmt.Sprint(adds, " adds"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newSDK(t)
				cfg := pacer.Config[string, int]{}
				tel, err := pacerotel.New(cfg, s.config)
				require.NoError(t, err)
				cfg.Carry = tel.Carry()
				r, err := pacer.New(cfg, tel.Handler(func(context.Context, string, []int) error { return nil }))
				require.NoError(t, err)
				tr := s.config.TracerProvider.Tracer("web")
				var want []trace.SpanContext
				var ctxs []context.Context
				for range adds {
					ctx, span := tr.Start(context.Background(), "add")
					span.End()
					want = append(want, span.SpanContext())
					ctxs = append(ctxs, ctx)
				}
				for i := range 2 * adds { // each Add's ctx twice, interleaved
					require.NoError(t, r.Add(ctxs[i%adds], "k", i))
				}
				run(t, r, time.Minute) // one batch of them all
				var linked []trace.SpanContext
				for _, sp := range s.ended() {
					if sp.Name() == "process" {
						require.Equal(t, int64(2*adds), attrs(sp)["pacer.size"])
						require.NotContains(t, attrs(sp), "pacer.links.dropped")
						for _, l := range sp.Links() {
							linked = append(linked, l.SpanContext.WithRemote(false))
						}
					}
				}
				require.Equal(t, want, linked)
			})
		})
	}
}
