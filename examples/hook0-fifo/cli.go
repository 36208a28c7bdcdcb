package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/pacerkit/pacer/examples/internal/opconsole"
)

// usage is the head of -h: the program's three modes. The flags follow.
const usage = `Usage:
  hook0-fifo [flags]
        play the demo against a fake receiver on loopback and check it
        (without -sub); exits 0 only if every check held
  hook0-fifo -sub NAME,URL,TYPES,MODE [-sub ...] [flags]
        run a dispatcher: POST /events at -listen publishes an event,
        GET /stats shows the figures; SIGINT or SIGTERM stops it
  hook0-fifo -receive [flags]
        run only the fake receiver at -listen (endpoints /hooks/NAME), to
        point -sub at; SIGINT prints what it saw

Flags:
`

// run runs the program with args, printing its report to stdout, until ctx
// ends or the demo is over. -h and a wrong flag exit the process (0, 2).
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("hook0-fifo", flag.ExitOnError)
	var subs []subscription
	fs.Func("sub", "subscription NAME,URL,TYPES,MODE, e.g. billing,https://example.com/hook,invoice.*|order.paid,fifo (repeat it; none runs the demo)", func(v string) error {
		s, err := parseSubscription(v)
		if err == nil && slices.ContainsFunc(subs, func(o subscription) bool { return o.Name == s.Name }) {
			err = fmt.Errorf("-sub %q: subscription %q defined twice", v, s.Name)
		}
		subs = append(subs, s)
		return err
	})
	var cfg dispatcherConfig
	var dc demoConfig
	addr := fs.String("listen", "127.0.0.1:8080", "address for POST /events (the demo's and -receive's fake receiver listen here; demo: a free loopback port unless set)")
	receive := fs.Bool("receive", false, "only run the fake receiver at -listen (endpoints /hooks/NAME), to try -sub for real")
	secret := fs.String("secret", os.Getenv("HOOK0_SECRET"), "HMAC-SHA256 secret signing every delivery in X-Hook0-Signature ($HOOK0_SECRET; demo: demo-secret)")
	fs.Float64Var(&cfg.Rate, "rate", 0, "deliveries per second over all subscriptions; 0 is unlimited")
	fs.IntVar(&cfg.Burst, "burst", 10, "burst of -rate")
	fs.IntVar(&cfg.Retry.Fast, "fast", 3, "fast retries, the delay doubling each time")
	fs.DurationVar(&cfg.Retry.FastDelay, "fast-delay", 3*time.Second, "delay before the first fast retry (demo: 25ms unless set)")
	fs.IntVar(&cfg.Retry.Slow, "slow", 5, "slow retries after the fast ones (demo: 2 unless set)")
	fs.DurationVar(&cfg.Retry.SlowDelay, "slow-delay", 10*time.Minute, "delay before each slow retry (demo: 250ms unless set)")
	fs.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "timeout of one delivery attempt (demo: 1s unless set)")
	fs.IntVar(&cfg.FIFOWorkers, "fifo-workers", 4, "deliveries at once to FIFO subscriptions (at most one per subscription)")
	fs.IntVar(&cfg.Workers, "workers", 8, "deliveries at once to concurrent subscriptions")
	fs.IntVar(&dc.Events, "events", 60, "demo: events to publish")
	fs.Float64Var(&dc.EventRate, "event-rate", 100, "demo: events published per second")
	fs.Float64Var(&dc.FailRate, "fail-rate", 0.2, "demo and -receive: share of requests the flaky endpoints answer 500")
	fs.DurationVar(&dc.DownFor, "down", 400*time.Millisecond, "demo: how long the warehouse endpoint is down at the start")
	fs.DurationVar(&dc.Latency, "latency", 10*time.Millisecond, "demo and -receive: the receiver's time to answer")
	fs.Uint64Var(&dc.Seed, "seed", 1, "demo and -receive: which requests fail")
	pgURL := fs.String("postgres", "", "keep the queues in PostgreSQL at this URL (e.g. postgres://user@host:5432/db), durable and shared by the dispatchers that use the same -schema; empty keeps them in the process")
	schema := fs.String("schema", "hook0_fifo", "with -postgres: the schema of the queues' tables, made if missing")
	fs.DurationVar(&cfg.LeaseTTL, "lease", 30*time.Second, "with -postgres: how long a dispatcher that died keeps its subscriptions from the others (renewed every third of it while a delivery runs)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	_ = fs.Parse(args)
	demo := len(subs) == 0 && !*receive
	if demo { // the demo's own defaults, for the flags not set
		set := map[string]bool{"secret": *secret != ""}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range map[string]string{"fast-delay": "25ms", "slow": "2", "slow-delay": "250ms", "timeout": "1s", "listen": "127.0.0.1:0", "secret": "demo-secret"} {
			if !set[name] {
				_ = fs.Set(name, v)
			}
		}
	}
	cfg.Subs, cfg.Secret = subs, []byte(*secret)
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if demo {
		cfg.Logger = slog.New(slog.DiscardHandler) // the report says it all
	}
	switch {
	case *receive:
		return serveReceiver(ctx, newReceiver(receiverConfig{Secret: cfg.Secret, FailRate: dc.FailRate, Seed: dc.Seed, Latency: dc.Latency}), *addr)
	case cfg.Retry.validate() != nil:
		return cfg.Retry.validate()
	case demo && (dc.Events < 0 || !(dc.EventRate > 0) || !(dc.FailRate >= 0 && dc.FailRate < 1)):
		return errors.New("-events must be >= 0, -event-rate > 0 and -fail-rate in [0, 1)")
	}
	if *pgURL != "" {
		st, num, closeStore, err := openPostgres(ctx, *pgURL, *schema, cfg.FIFOWorkers+cfg.Workers)
		if err != nil {
			return err
		}
		defer closeStore()
		cfg.Store, cfg.Numbering = st, num
		fmt.Fprintf(stdout, "queues in PostgreSQL, schema %s\n", *schema)
	}
	if demo {
		return runDemo(ctx, cfg, dc, *addr, stdout)
	}
	return serve(ctx, cfg, *addr, stdout)
}

// serve runs a dispatcher for real, serving routes at addr, until ctx ends;
// then it stops taking events, delivers what is queued (up to 30 s; with a
// Store what is in flight) and prints the figures.
func serve(ctx context.Context, cfg dispatcherConfig, addr string, stdout io.Writer) error {
	d, err := newDispatcher(cfg)
	if err != nil {
		return err
	}
	srv, err := hookhttp.Listen(addr, routes(d))
	if err != nil {
		return err
	}
	cfg.Logger.Warn("listening", "events", srv.URL()+"/events", "subscriptions", len(cfg.Subs))
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- d.run(context.Background()) }()

	<-ctx.Done()
	cfg.Logger.Warn("shutting down: delivering what is queued (with a store, what is in flight: it keeps the rest)")
	shutCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = errors.Join(srv.Shutdown(shutCtx), d.shutdown(shutCtx), <-done)
	took := time.Since(start)
	stored, serr := d.countDead(shutCtx)
	newReport(d, nil, took, stored).print(stdout)
	return errors.Join(err, serr)
}

// serveReceiver runs only the fake receiver until SIGINT or SIGTERM, then
// prints what each endpoint saw.
func serveReceiver(ctx context.Context, rc *receiver, addr string) error {
	srv, err := hookhttp.Listen(addr, rc)
	if err != nil {
		return err
	}
	fmt.Printf("fake receiver at %s/hooks/NAME; %.0f%% of requests fail; Ctrl-C prints what it saw\n", srv.URL(), 100*rc.cfg.FailRate)
	<-ctx.Done()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutCtx)
	rc.print(os.Stdout)
	return err
}

// maxEventBody bounds the body of POST /events.
const maxEventBody = 1 << 20

// routes serves the dispatcher's HTTP API: POST /events with {"type": ...,
// "payload": ...} (and an optional "id") publishes an event and answers
// 202 with the number of deliveries; GET /stats shows the figures; with a
// Store, /pacer/ is the console, whose actions it takes from this machine.
func routes(d *dispatcher) http.Handler {
	var ids atomic.Uint64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events", func(w http.ResponseWriter, r *http.Request) {
		// The whole body, up to maxEventBody, is read before deciding, so
		// that one too large is refused as such (413) whatever it starts
		// with. Unmarshal, unlike a Decoder, takes exactly one JSON value:
		// trailing data or a second value is malformed (400).
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBody))
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			http.Error(w, fmt.Sprintf("event body over %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		var ev Event
		if err == nil {
			err = json.Unmarshal(body, &ev)
		}
		if err == nil && ev.Type == "" {
			err = errors.New(`no "type"`)
		}
		if err != nil {
			http.Error(w, `want one JSON object {"type": "...", "payload": {...}}: `+err.Error(), http.StatusBadRequest)
			return
		}
		if ev.ID == "" {
			ev.ID = fmt.Sprintf("evt_%d_%d", time.Now().Unix(), ids.Add(1))
		}
		n, err := d.publish(r.Context(), ev)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(map[string]any{"id": ev.ID, "deliveries": n})
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		newReport(d, nil, 0, -1).print(w)
	})
	if d.cfg.Store != nil {
		opconsole.MustMount(mux, d.cfg.Store, true, d.fifo.View(), d.concurrent.View())
	}
	return mux
}
