package pacerotel_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/pacerkit/pacer"
	pacerotel "github.com/pacerkit/pacer/otel"
)

// The Prometheus path: the OTel Prometheus exporter is the meter's reader,
// and promhttp serves what it gathers at /metrics. A service would
// register with prometheus.DefaultRegisterer and mount promhttp.Handler().
func Example_prometheus() {
	ctx := context.Background()
	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo(), otelprom.WithoutTargetInfo())
	if err != nil {
		log.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(ctx)

	cfg := pacer.Config[string, string]{}
	tel, err := pacerotel.New(cfg, pacerotel.Config{Queue: "emails", MeterProvider: mp})
	if err != nil {
		log.Fatal(err)
	}
	cfg.OnEvent = tel.OnEvent(cfg.OnEvent)
	r, err := pacer.New(cfg, tel.Handler(func(ctx context.Context, user string, emails []string) error {
		return nil // send them
	}))
	if err != nil {
		log.Fatal(err)
	}
	reg, err := tel.Observe(r)
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Unregister()
	go r.Run(ctx)
	for _, user := range []string{"ann", "bob", "ann"} {
		if err := r.Add(ctx, user, "hello"); err != nil {
			log.Fatal(err)
		}
	}
	if err := r.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if l := lines.Text(); strings.HasPrefix(l, "pacer_values") || strings.HasPrefix(l, "pacer_blocked_keys") {
			fmt.Println(l)
		}
	}
	// Output:
	// pacer_blocked_keys{pacer_queue="emails"} 0
	// pacer_values{pacer_queue="emails"} 0
	// pacer_values_dropped_total{pacer_queue="emails"} 0
	// pacer_values_handled_total{pacer_queue="emails"} 3
	// pacer_values_received_total{pacer_queue="emails"} 3
	// pacer_values_refused_total{pacer_queue="emails"} 0
}
