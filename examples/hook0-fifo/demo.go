package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// demoConfig shapes the embedded scenario.
type demoConfig struct {
	Events    int           // events to publish
	EventRate float64       // events per second
	FailRate  float64       // share of requests the flaky endpoints fail
	DownFor   time.Duration // how long the warehouse endpoint is down from the start
	Latency   time.Duration // the receiver's time to answer
	Seed      uint64        // which requests fail
}

// The demo's subscriptions: five FIFO, two concurrent. warehouse's endpoint
// is down for a while, legacy's always fails (demoReceiver).
func demoSubscriptions(base string) []subscription {
	sub := func(name string, fifo bool, types ...string) subscription {
		return subscription{Name: name, URL: base + "/hooks/" + name, Types: types, FIFO: fifo}
	}
	return []subscription{
		sub("orders", true, "order.*"),
		sub("billing", true, "invoice.*", "order.paid", "order.refunded"),
		sub("audit", true, "*"),
		sub("warehouse", true, "order.paid", "order.shipped"),
		sub("legacy", true, "customer.deleted"),
		sub("crm", false, "customer.*", "order.created"),
		sub("analytics", false, "*"),
	}
}

func demoReceiver(dc demoConfig, secret []byte) *receiver {
	return newReceiver(receiverConfig{Secret: secret, FailRate: dc.FailRate, Seed: dc.Seed, Latency: dc.Latency,
		Down: map[string]time.Duration{"warehouse": dc.DownFor}, Broken: map[string]bool{"legacy": true}})
}

// demoTypes is the cycle of event types the demo publishes.
var demoTypes = []string{
	"order.created", "order.paid", "invoice.issued", "customer.updated", "order.shipped",
	"invoice.paid", "order.created", "order.paid", "invoice.issued", "order.shipped",
	"customer.updated", "order.refunded", "invoice.paid", "order.created", "customer.deleted",
}

// runDemo plays the scenario against the fake receiver on loopback and
// prints its report.
func runDemo(ctx context.Context, cfg dispatcherConfig, dc demoConfig, addr string, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rc := demoReceiver(dc, cfg.Secret)
	srv, err := hookhttp.Listen(addr, rc)
	if err != nil {
		return err
	}
	defer srv.Shutdown(context.Background())
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = cfg.FIFOWorkers + cfg.Workers
	defer transport.CloseIdleConnections()
	cfg.Subs, cfg.Transport = demoSubscriptions(srv.URL()), transport
	d, err := newDispatcher(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "hook0-fifo demo: %d events to %d subscriptions, fake receiver at %s/hooks/NAME\n", dc.Events, len(cfg.Subs), srv.URL())
	r := cfg.Retry
	fmt.Fprintf(stdout, "  retries: %d fast retries from %v (doubling), then %d slow every %v (%d attempts)\n", r.Fast, r.FastDelay, r.Slow, r.SlowDelay, r.attempts())
	fmt.Fprintf(stdout, "  receiver: %.0f%% of requests fail, warehouse down for %v, legacy always fails; workers: %d fifo, %d concurrent\n",
		100*dc.FailRate, dc.DownFor, cfg.FIFOWorkers, cfg.Workers)
	rep, err := playDemo(ctx, d, rc, dc)
	if err != nil {
		return err
	}
	rep.print(stdout)
	if !rep.ok() {
		return errors.New("demo checks failed")
	}
	return nil
}

// playDemo publishes the scenario's events through d (not running yet)
// while its Runners run, waits for every outcome, shuts d down and reports
// what d and rc saw.
func playDemo(ctx context.Context, d *dispatcher, rc *receiver, dc demoConfig) (*report, error) {
	start := time.Now()
	// A Store's messages of an earlier run would reach the receiver too.
	if err := d.both(func(r *runner) error {
		st, err := r.Stats(ctx)
		if err == nil && d.cfg.Store != nil && st.Values > 0 {
			err = fmt.Errorf("the store holds %d values of an earlier run, which would upset the demo's counts: give the demo a -schema of its own", st.Values)
		}
		return err
	}); err != nil {
		return nil, err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- d.run(runCtx) }()
	err := publishDemo(ctx, d, dc)
	if err == nil {
		err = d.track.waitIdle(ctx)
	}
	// Shutdown stops the Runners, so Run returns; only then end its ctx,
	// which Run could return as its error.
	if err = errors.Join(err, d.shutdown(ctx), <-done); err != nil {
		return nil, err
	}
	took := time.Since(start)
	stored, err := d.countDead(ctx)
	if err != nil {
		return nil, err
	}
	return newReport(d, rc, took, stored), nil
}

// publishDemo publishes dc.Events events at dc.EventRate.
func publishDemo(ctx context.Context, d *dispatcher, dc demoConfig) error {
	gap := time.Duration(float64(time.Second) / dc.EventRate)
	for i := range dc.Events {
		ev := Event{ID: fmt.Sprintf("evt_%03d", i+1), Type: demoTypes[i%len(demoTypes)], Payload: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i+1))}
		if _, err := d.publish(ctx, ev); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(gap):
		}
	}
	return nil
}
