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
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	var usage usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &usage):
		os.Exit(2) // the flag package has printed the error and the usage
	case err != nil:
		fmt.Fprintln(os.Stderr, "hook0-fifo:", err)
		os.Exit(1)
	}
}

// A usageError is a command line the flags refused.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

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
// the demo, the scenario is over.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("hook0-fifo", flag.ContinueOnError)
	var subs []subscription
	fs.Func("sub", "subscription NAME,URL,TYPES,MODE, e.g. billing,https://example.com/hook,invoice.*|order.paid,fifo (repeat it; none runs the demo)", func(v string) error {
		s, err := parseSubscription(v)
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
		schema    = fs.String("schema", defaultSchema, "with -postgres: the schema of the queues' tables, made if missing")
		lease     = fs.Duration("lease", 30*time.Second, "with -postgres: how long a dispatcher that died keeps its subscriptions from the others (renewed every third of it while a delivery runs)")
	)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return err
	} else if err != nil {
		return usageError{err}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	demo := len(subs) == 0 && !*receive

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
	if *receive {
		return serveReceiver(ctx, newReceiver(rcfg), *addr)
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
		return runDemo(ctx, cfg, dc, *addr, stdout)
	}
	return serve(ctx, cfg, *addr, stdout)
}

// runDemo plays the embedded scenario against the fake receiver on
// loopback and prints its report.
func runDemo(ctx context.Context, cfg dispatcherConfig, dc demoConfig, addr string, stdout io.Writer) error {
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
	fmt.Fprintf(stdout, "hook0-fifo demo: %d events to %d subscriptions, fake receiver at %s/hooks/NAME\n", dc.Events, len(cfg.Subs), srv.url())
	fmt.Fprintf(stdout, "  retries: %v (%d attempts)\n", cfg.Retry, cfg.Retry.attempts())
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
