// Command hook0-fifo delivers webhooks the way Hook0 does: every event
// goes to every subscription that matches its type; a FIFO subscription
// gets message N+1 only after message N succeeded or used up its retries
// (fast ones, then slow ones) and was dead-lettered; other subscriptions
// get theirs concurrently; and no subscription waits for another that
// fails.
//
// Without -sub it runs an embedded demo against its own fake receiver on
// loopback and exits 0 only if the demo's checks held. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var subs []subscription
	flag.Func("sub", "subscription NAME,URL,TYPES,MODE, e.g. billing,https://example.com/hook,invoice.*|order.paid,fifo (repeat it; none runs the demo)", func(v string) error {
		s, err := parseSubscription(v)
		subs = append(subs, s)
		return err
	})
	var (
		addr      = flag.String("listen", "127.0.0.1:8080", "address for POST /events (the demo's and -receive's fake receiver listen here; demo: a free loopback port unless set)")
		receive   = flag.Bool("receive", false, "only run the fake receiver at -listen (endpoints /hooks/NAME), to try -sub for real")
		secret    = flag.String("secret", os.Getenv("HOOK0_SECRET"), "HMAC-SHA256 secret signing every delivery in X-Hook0-Signature ($HOOK0_SECRET; demo: demo-secret)")
		rate      = flag.Float64("rate", 0, "deliveries per second over all subscriptions; 0 is unlimited")
		burst     = flag.Int("burst", 10, "burst of -rate")
		fast      = flag.Int("fast", 3, "fast retries, the delay doubling each time")
		fastDelay = flag.Duration("fast-delay", 3*time.Second, "delay before the first fast retry (demo: 25ms unless set)")
		slow      = flag.Int("slow", 5, "slow retries after the fast ones (demo: 2 unless set)")
		slowDelay = flag.Duration("slow-delay", 10*time.Minute, "delay before each slow retry (demo: 250ms unless set)")
		timeout   = flag.Duration("timeout", 10*time.Second, "timeout of one delivery attempt (demo: 1s unless set)")
		fifoW     = flag.Int("fifo-workers", 4, "deliveries at once to FIFO subscriptions (at most one per subscription)")
		workers   = flag.Int("workers", 8, "deliveries at once to concurrent subscriptions")
		events    = flag.Int("events", 60, "demo: events to publish")
		eventRate = flag.Float64("event-rate", 100, "demo: events published per second")
		failRate  = flag.Float64("fail-rate", 0.2, "demo and -receive: share of requests the flaky endpoints answer 500")
		downFor   = flag.Duration("down", 400*time.Millisecond, "demo: how long the warehouse endpoint is down at the start")
		latency   = flag.Duration("latency", 10*time.Millisecond, "demo and -receive: the receiver's time to answer")
		seed      = flag.Uint64("seed", 1, "demo and -receive: which requests fail")
		verbose   = flag.Bool("v", false, "demo: log every retry and dead letter, as real runs do")
	)
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	demo := len(subs) == 0 && !*receive

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if demo && !*verbose {
		logger = slog.New(slog.DiscardHandler) // the report says it all
	}
	cfg := dispatcherConfig{
		Subs:  subs,
		Retry: schedule{Fast: *fast, FastDelay: *fastDelay, Slow: *slow, SlowDelay: *slowDelay},
		Rate:  *rate, Burst: *burst, FIFOWorkers: *fifoW, Workers: *workers,
		Secret: []byte(*secret), Timeout: *timeout, Logger: logger,
	}
	rcfg := receiverConfig{Secret: []byte(*secret), FailRate: *failRate, Seed: *seed, Latency: *latency}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch {
	case *receive:
		err = serveReceiver(ctx, newReceiver(rcfg), *addr)
	case demo:
		defaults := map[string]func(){
			"fast-delay": func() { cfg.Retry.FastDelay = 25 * time.Millisecond },
			"slow":       func() { cfg.Retry.Slow = 2 },
			"slow-delay": func() { cfg.Retry.SlowDelay = 250 * time.Millisecond },
			"timeout":    func() { cfg.Timeout = time.Second },
			"listen":     func() { *addr = "127.0.0.1:0" },
			"secret":     func() { cfg.Secret = []byte("demo-secret") },
		}
		for name, apply := range defaults {
			if !set[name] && (name != "secret" || len(cfg.Secret) == 0) {
				apply()
			}
		}
		dc := demoConfig{Events: *events, EventRate: *eventRate, FailRate: *failRate, DownFor: *downFor, Latency: *latency, Seed: *seed, Panic: true}
		err = runDemo(ctx, cfg, dc, *addr)
	default:
		err = serve(ctx, cfg, *addr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hook0-fifo:", err)
		os.Exit(1)
	}
}

// runDemo plays the embedded scenario against the fake receiver on
// loopback and prints its report.
func runDemo(ctx context.Context, cfg dispatcherConfig, dc demoConfig, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if dc.Events < 0 || !(dc.EventRate > 0) || !(dc.FailRate >= 0 && dc.FailRate < 1) {
		return errors.New("-events must be >= 0, -event-rate > 0 and -fail-rate in [0, 1)")
	}
	rc := newReceiver(demoReceiver(dc, cfg.Secret))
	srv, err := listen(addr, rc)
	if err != nil {
		return err
	}
	defer srv.shutdown(context.Background())
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = cfg.FIFOWorkers + cfg.Workers
	defer transport.CloseIdleConnections()
	cfg.Subs, cfg.Transport = demoSubscriptions(srv.url()), transport
	d, err := newDispatcher(cfg)
	if err != nil {
		return err
	}
	fmt.Printf("hook0-fifo demo: %d events to %d subscriptions, fake receiver at %s/hooks/NAME\n", dc.Events, len(cfg.Subs), srv.url())
	fmt.Printf("  retries: %v (%d attempts)\n", cfg.Retry, cfg.Retry.attempts())
	fmt.Printf("  receiver: %.0f%% of requests fail, warehouse down for %v, legacy always fails; workers: %d fifo, %d concurrent\n",
		100*dc.FailRate, dc.DownFor, cfg.FIFOWorkers, cfg.Workers)
	rep, err := playDemo(ctx, d, rc, dc)
	if err != nil {
		return err
	}
	rep.print(os.Stdout)
	if !rep.ok() {
		return errors.New("demo checks failed")
	}
	return nil
}
