package pacerotel_test

import (
	"context"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/pacerkit/pacer"
	pacerotel "github.com/pacerkit/pacer/otel"
)

// TestGlobalProviders wires a Telemetry to otel's global providers before
// an SDK is installed: calls are neither traced nor timed, until the SDK
// is installed. It runs in a process of its own, whose globals are fresh.
func TestGlobalProviders(t *testing.T) {
	if os.Getenv("PACEROTEL_GLOBAL_TEST") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestGlobalProviders$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "PACEROTEL_GLOBAL_TEST=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestGlobalProviders")
		return
	}
	cfg := pacer.Config[string, int]{}
	tel, err := pacerotel.New(cfg, pacerotel.Config{})
	require.NoError(t, err)
	calls := 0
	h := tel.Handler(func(context.Context, string, []int) error { calls++; return nil })
	next := func(pacer.Event[string]) {}
	require.Equal(t, reflect.ValueOf(next).Pointer(), reflect.ValueOf(tel.OnEvent(next)).Pointer(),
		"no SDK yet: OnEvent leaves the Runner untimed")
	require.Nil(t, tel.Carry(), "no SDK yet: the Runner carries nothing")
	require.NoError(t, h(context.Background(), "k", nil))
	require.Equal(t, 1, calls)

	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() {
		require.NoError(t, tp.Shutdown(context.Background()))
		require.NoError(t, mp.Shutdown(context.Background()))
	}()
	otel.SetTracerProvider(tp)
	otel.SetMeterProvider(mp)
	require.NoError(t, h(context.Background(), "k", nil))
	require.Equal(t, 2, calls)
	require.Len(t, spans.Ended(), 1, "the SDK installed later records the spans")
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	require.Equal(t, "pacer.batch.duration", rm.ScopeMetrics[0].Metrics[0].Name, "and the metrics")
	require.NotEqual(t, reflect.ValueOf(next).Pointer(), reflect.ValueOf(tel.OnEvent(next)).Pointer())
	require.NotNil(t, tel.Carry())
}
