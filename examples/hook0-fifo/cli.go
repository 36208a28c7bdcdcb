package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"time"
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

// run runs the program with the command-line arguments args (without the
// program's name), printing its report to stdout, until ctx ends or, for
// the demo, the scenario is over. -h and a flag it refuses exit the
// process, with 0 and 2.
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
	var (
		addr      = fs.String("listen", "127.0.0.1:8080", "address for POST /events (the demo's and -receive's fake receiver listen here; demo: a free loopback port unless set)")
		receive   = fs.Bool("receive", false, "only run the fake receiver at -listen (endpoints /hooks/NAME), to try -sub for real")
		secret    = fs.String("secret", os.Getenv("HOOK0_SECRET"), "HMAC-SHA256 secret signing every delivery in X-Hook0-Signature ($HOOK0_SECRET; demo: demo-secret)")
		rate      = fs.Float64("rate", 0, "deliveries per second over all subscriptions; 0 is unlimited")
		burst     = fs.Int("burst", 10, "burst of -rate")
		fast      = fs.Int("fast", 3, "fast retries, the delay doubling each time")
		fastDelay = fs.Duration("fast-delay", 3*time.Second, "delay before the first fast retry (demo: 25ms unless set)")
		slow      = fs.Int("slow", 5, "slow retries after the fast ones (demo: 2 unless set)")
		slowDelay = fs.Duration("slow-delay", 10*time.Minute, "delay before each slow retry (demo: 250ms unless set)")
		timeout   = fs.Duration("timeout", 10*time.Second, "timeout of one delivery attempt (demo: 1s unless set)")
		fifoW     = fs.Int("fifo-workers", 4, "deliveries at once to FIFO subscriptions (at most one per subscription)")
		workers   = fs.Int("workers", 8, "deliveries at once to concurrent subscriptions")
		events    = fs.Int("events", 60, "demo: events to publish")
		eventRate = fs.Float64("event-rate", 100, "demo: events published per second")
		failRate  = fs.Float64("fail-rate", 0.2, "demo and -receive: share of requests the flaky endpoints answer 500")
		downFor   = fs.Duration("down", 400*time.Millisecond, "demo: how long the warehouse endpoint is down at the start")
		latency   = fs.Duration("latency", 10*time.Millisecond, "demo and -receive: the receiver's time to answer")
		seed      = fs.Uint64("seed", 1, "demo and -receive: which requests fail")
		verbose   = fs.Bool("v", false, "demo: log every retry and dead letter, as real runs do")
		pgURL     = fs.String("postgres", "", "keep the queues in PostgreSQL at this URL (e.g. postgres://user@host:5432/db), durable and shared by the dispatchers that use the same -schema; empty keeps them in the process")
		schema    = fs.String("schema", "hook0_fifo", "with -postgres: the schema of the queues' tables, made if missing")
		lease     = fs.Duration("lease", 30*time.Second, "with -postgres: how long a dispatcher that died keeps its subscriptions from the others (renewed every third of it while a delivery runs)")
	)
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
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if demo && !*verbose {
		logger = slog.New(slog.DiscardHandler) // the report says it all
	}
	cfg := dispatcherConfig{
		Subs:  subs,
		Retry: schedule{Fast: *fast, FastDelay: *fastDelay, Slow: *slow, SlowDelay: *slowDelay},
		Rate:  *rate, Burst: *burst, FIFOWorkers: *fifoW, Workers: *workers,
		Secret: []byte(*secret), Timeout: *timeout, Logger: logger, LeaseTTL: *lease,
	}
	rcfg := receiverConfig{Secret: []byte(*secret), FailRate: *failRate, Seed: *seed, Latency: *latency}
	switch {
	case *receive:
		return serveReceiver(ctx, newReceiver(rcfg), *addr)
	case cfg.Retry.validate() != nil:
		return cfg.Retry.validate()
	case demo && (*events < 0 || !(*eventRate > 0) || !(*failRate >= 0 && *failRate < 1)):
		return errors.New("-events must be >= 0, -event-rate > 0 and -fail-rate in [0, 1)")
	}
	if *pgURL != "" {
		st, num, closeStore, err := openPostgres(ctx, *pgURL, *schema, *fifoW+*workers)
		if err != nil {
			return err
		}
		defer closeStore()
		cfg.Store, cfg.Numbering = st, num
		fmt.Fprintf(stdout, "queues in PostgreSQL, schema %s\n", *schema)
	}
	if demo {
		dc := demoConfig{Events: *events, EventRate: *eventRate, FailRate: *failRate, DownFor: *downFor, Latency: *latency, Seed: *seed, Panic: true}
		return runDemo(ctx, cfg, dc, *addr, stdout)
	}
	return serve(ctx, cfg, *addr, stdout)
}
