package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer"
)

// demoConfig shapes the embedded scenario.
type demoConfig struct {
	Events    int           // events to publish
	EventRate float64       // events per second
	FailRate  float64       // share of requests the flaky endpoints fail
	DownFor   time.Duration // how long the warehouse endpoint is down from the start
	Latency   time.Duration // the receiver's time to answer
	Seed      uint64        // which requests fail
	Panic     bool          // make the handler panic once (audit #3, first call)
}

// The demo's subscriptions: five FIFO, two concurrent. warehouse's endpoint
// is down for a while, legacy's always fails.
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

// demoReceiver returns the receiver configuration of the scenario.
func demoReceiver(dc demoConfig, secret []byte) receiverConfig {
	return receiverConfig{
		Secret: secret, FailRate: dc.FailRate, Seed: dc.Seed, Latency: dc.Latency,
		Down:   map[string]time.Duration{"warehouse": dc.DownFor},
		Broken: map[string]bool{"legacy": true},
	}
}

// demoTypes is the cycle of event types the demo publishes.
var demoTypes = []string{
	"order.created", "order.paid", "invoice.issued", "customer.updated", "order.shipped",
	"invoice.paid", "order.created", "order.paid", "invoice.issued", "order.shipped",
	"customer.updated", "order.refunded", "invoice.paid", "order.created", "customer.deleted",
}

// playDemo publishes the scenario's events through d while its Runners run,
// waits until every message was delivered or dead-lettered, shuts d down
// and reports what d and rc saw. d's Runners must not be running yet.
func playDemo(ctx context.Context, d *dispatcher, rc *receiver, dc demoConfig) (*report, error) {
	start := time.Now()
	if dc.Panic {
		var panicked atomic.Bool
		d.beforeSend = func(m message) {
			if m.Sub == "audit" && m.Seq == 3 && panicked.CompareAndSwap(false, true) {
				panic("audit: template for " + m.Event.Type + " is nil")
			}
		}
	}
	var mark deadMark
	if d.stored {
		var err error
		if mark, err = d.checkEmpty(ctx); err != nil {
			return nil, err
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- d.run(runCtx) }()

	err := publishDemo(ctx, d, dc)
	if err == nil {
		err = d.track.waitIdle(ctx)
	}
	if serr := d.shutdown(ctx); err == nil {
		err = serr
	}
	// Shutdown has stopped the Runners, so Run returns now. Only then end
	// its ctx: Run may return a ctx cancelled right after Shutdown as its error.
	if rerr := <-done; err == nil && rerr != nil {
		err = rerr
	}
	stop()
	if err != nil {
		return nil, err
	}
	took := time.Since(start)
	var stored *storedLetters
	if d.stored {
		ids, n, _, err := d.storedDead(ctx, mark)
		if err != nil {
			return nil, err
		}
		stored = &storedLetters{n: n, ids: ids}
	}
	return newReport(d, rc, took, stored), nil
}

// checkEmpty makes sure that the Store holds no values of an earlier run
// for the demo's queues, which would reach the receiver too, and returns where the dead letters of this run will start.
func (d *dispatcher) checkEmpty(ctx context.Context) (deadMark, error) {
	for _, r := range []*pacer.Runner[key, message]{d.fifo, d.concurrent} {
		st, err := r.Stats(ctx)
		if err != nil {
			return deadMark{}, err
		}
		if st.Values > 0 {
			return deadMark{}, fmt.Errorf("the store holds %d values of an earlier run, which would upset the demo's counts: give the demo a -schema of its own", st.Values)
		}
	}
	_, _, mark, err := d.storedDead(ctx, deadMark{})
	return mark, err
}

// publishDemo publishes dc.Events events at dc.EventRate.
func publishDemo(ctx context.Context, d *dispatcher, dc demoConfig) error {
	gap := time.Duration(float64(time.Second) / dc.EventRate)
	for i := range dc.Events {
		typ := demoTypes[i%len(demoTypes)]
		payload, _ := json.Marshal(map[string]any{"n": i + 1})
		ev := Event{ID: fmt.Sprintf("evt_%03d", i+1), Type: typ, Payload: payload}
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
