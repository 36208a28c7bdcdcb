package pacerotel_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/pacerkit/pacer"
	pacerotel "github.com/pacerkit/pacer/otel"
)

// discard is an exporter of spans and metrics that drops everything.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }
func (discard) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}
func (discard) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}
func (discard) Export(context.Context, *metricdata.ResourceMetrics) error { return nil }
func (discard) ForceFlush(context.Context) error                          { return nil }

// discarding returns a Config whose providers are the SDK's, with a batch
// span processor and a periodic reader as a service would set them up,
// over exporters that discard everything. Every span is sampled, unless
// wiring ends in "-1pct": then one trace in a hundred is.
func discarding(b *testing.B, wiring string) pacerotel.Config {
	sampler := sdktrace.AlwaysSample()
	if strings.HasSuffix(wiring, "-1pct") {
		sampler = sdktrace.ParentBased(sdktrace.TraceIDRatioBased(0.01))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}), sdktrace.WithSampler(sampler))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(discard{}, sdkmetric.WithInterval(10*time.Second))))
	b.Cleanup(func() {
		if err := tp.Shutdown(context.Background()); err != nil {
			b.Error(err)
		}
		if err := mp.Shutdown(context.Background()); err != nil {
			b.Error(err)
		}
	})
	return pacerotel.Config{TracerProvider: tp, MeterProvider: mp}
}

// BenchmarkRunner is the root package's BenchmarkRunner (values over
// 10,000 keys, added by one goroutine while 2 workers run a no-op handler,
// no debounce, then a graceful Shutdown; one op is one value) with the
// Telemetry wired in four ways. Besides the wall time per value it reports
// the process's CPU time per value (cpu-ns/op, from getrusage(2)), which a
// shared machine's other work moves far less:
//   - bare: not wired, the baseline;
//   - noop: Handler, OnEvent and Observe wired to otel's global providers,
//     no SDK installed;
//   - sdk: Handler and Observe wired to the SDK, over exporters that
//     discard everything, every span sampled;
//   - sdk-1pct: the same, one trace in a hundred sampled;
//   - sdk-events: sdk and OnEvent, for the values behind blocked keys;
//   - sdk-carry: sdk and Carry, each Add's ctx carrying a span context, so
//     that each call's span links the Adds of its batch.
func BenchmarkRunner(b *testing.B) {
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	for _, mode := range []struct {
		name     string
		maxBatch int
	}{{"coalesce", 0}, {"strict", 1}} {
		for _, wiring := range []string{"bare", "noop", "sdk", "sdk-1pct", "sdk-events", "sdk-carry"} {
			b.Run(mode.name+"/"+wiring, func(b *testing.B) {
				ctx := context.Background()
				running := make(chan struct{})
				var once sync.Once
				cfg := pacer.Config[string, int]{MaxBatch: mode.maxBatch, Workers: 2}
				h := pacer.Handler[string, int](func(context.Context, string, []int) error {
					once.Do(func() { close(running) })
					return nil
				})
				var tel *pacerotel.Telemetry[string, int]
				if wiring != "bare" {
					tc := pacerotel.Config{}
					if wiring != "noop" {
						tc = discarding(b, wiring)
					}
					var err error
					if tel, err = pacerotel.New(cfg, tc); err != nil {
						b.Fatal(err)
					}
					if wiring == "noop" || wiring == "sdk-events" {
						cfg.OnEvent = tel.OnEvent(cfg.OnEvent)
					}
					if wiring == "noop" || wiring == "sdk-carry" {
						cfg.Carry = tel.Carry()
					}
					h = tel.Handler(h)
				}
				r, err := pacer.New(cfg, h)
				if err != nil {
					b.Fatal(err)
				}
				if tel != nil {
					reg, err := tel.Observe(r)
					if err != nil {
						b.Fatal(err)
					}
					defer reg.Unregister()
				}
				done := make(chan error, 1)
				go func() { done <- r.Run(ctx) }()
				// The Adds' ctx: a request's span context, as a service's
				// webhook handler would pass on.
				addCtx := trace.ContextWithSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
					TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled}))
				// Wait until Run runs, so the workers handle values while they are added.
				if err := r.Add(ctx, "warm-up", -1); err != nil {
					b.Fatal(err)
				}
				<-running
				b.ReportAllocs()
				b.ResetTimer()
				cpu := cpuTime()
				for i := range b.N {
					if err := r.Add(addCtx, keys[i%len(keys)], i); err != nil {
						b.Fatal(err)
					}
				}
				if err := r.Shutdown(ctx); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				st, err := r.Stats(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if st.Handled != uint64(b.N)+1 {
					b.Fatalf("handled %d of %d values", st.Handled, b.N+1)
				}
				b.ReportMetric(float64(st.Batches-1)/float64(b.N), "calls/op")
			})
		}
	}
}

// BenchmarkHandler measures what the wrapper adds to one handler call,
// with no Runner around it: bare is the handler alone, span the handler in
// a span of the SDK without attributes (the floor of any tracing wrapper),
// span-attrs the same span with the kind and the three attributes that the
// wrapper's has here, made once (the floor of any wrapper that records
// them), noop
// and sdk the wrapper as BenchmarkRunner wires it. cpu-ns/op counts the
// span processor's goroutine and the GC too.
func BenchmarkHandler(b *testing.B) {
	h := pacer.Handler[string, int](func(context.Context, string, []int) error { return nil })
	batch := []int{1}
	for _, wiring := range []string{"bare", "noop", "span", "span-attrs", "sdk", "sdk-1pct"} {
		b.Run(wiring, func(b *testing.B) {
			w := h
			if wiring == "span" {
				tr := discarding(b, wiring).TracerProvider.Tracer("span")
				w = func(ctx context.Context, key string, batch []int) error {
					ctx, span := tr.Start(ctx, "process")
					defer span.End()
					return h(ctx, key, batch)
				}
			} else if wiring == "span-attrs" {
				tr := discarding(b, wiring).TracerProvider.Tracer("span")
				kind := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
				attrs := []attribute.KeyValue{attribute.Int("pacer.attempt", 1), attribute.Int("pacer.size", 1),
					attribute.String("pacer.outcome", "ok")}
				w = func(ctx context.Context, key string, batch []int) error {
					ctx, span := tr.Start(ctx, "process", kind...)
					err := h(ctx, key, batch)
					span.SetAttributes(attrs...)
					span.End()
					return err
				}
			} else if wiring != "bare" {
				tc := pacerotel.Config{}
				if wiring != "noop" {
					tc = discarding(b, wiring)
				}
				tel, err := pacerotel.New(pacer.Config[string, int]{}, tc)
				if err != nil {
					b.Fatal(err)
				}
				w = tel.Handler(h)
			}
			ctx := context.Background()
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := w(ctx, "key", batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
