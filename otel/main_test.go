package pacerotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	pacerotel "github.com/pacerkit/pacer/otel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sdk is an OTel SDK whose spans and metrics a test reads in memory.
type sdk struct {
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	config pacerotel.Config
}

func newSDK(t *testing.T) *sdk {
	t.Helper()
	s := &sdk{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	t.Cleanup(func() {
		require.NoError(t, tp.Shutdown(context.Background()))
		require.NoError(t, mp.Shutdown(context.Background()))
	})
	s.config = pacerotel.Config{TracerProvider: tp, MeterProvider: mp}
	return s
}

// ended returns the spans that ended, in the order they ended.
func (s *sdk) ended() []sdktrace.ReadOnlySpan { return s.spans.Ended() }

// collect returns the metrics collected now, by name.
func (s *sdk) collect(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, s.reader.Collect(context.Background(), &rm))
	out := make(map[string]metricdata.Aggregation)
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, "github.com/pacerkit/pacer/otel", sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// attrs returns a span's attributes as a map.
func attrs(s sdktrace.ReadOnlySpan) map[string]any {
	out := make(map[string]any)
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

// point returns the value of the data point of a gauge or sum whose
// attributes are want, and whether there is one.
func point[N int64 | float64](t *testing.T, agg metricdata.Aggregation, want ...attribute.KeyValue) (N, bool) {
	t.Helper()
	var pts []metricdata.DataPoint[N]
	switch a := agg.(type) {
	case metricdata.Gauge[N]:
		pts = a.DataPoints
	case metricdata.Sum[N]:
		pts = a.DataPoints
	default:
		t.Fatalf("not a gauge or a sum of %T: %T", *new(N), agg)
	}
	set := attribute.NewSet(want...)
	for _, p := range pts {
		if p.Attributes.Equals(&set) {
			return p.Value, true
		}
	}
	return 0, false
}

// points returns the number of data points of a gauge.
func points[N int64 | float64](agg metricdata.Aggregation) int {
	if g, ok := agg.(metricdata.Gauge[N]); ok {
		return len(g.DataPoints)
	}
	return -1
}

// queueAttr is the pacer.queue attribute of q.
func queueAttr(q string) attribute.KeyValue { return attribute.String("pacer.queue", q) }
