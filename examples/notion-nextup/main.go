// Command notion-nextup keeps every person's task list in order: once a
// person's edits go quiet, it ranks their open tasks, projects completion
// dates in business days and writes back only what changed, all under the
// task API's 3 requests per second. This file wires pacer; webhook.go takes
// events in, pipeline.go is the handler. Without -api-url it plays a demo
// against a fake task API (demo.go, fakeapi.go) and checks it (report.go).
package main

import (
	"cmp"
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

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/redis/redisrate"
	"github.com/pacerkit/pacer/redis/redisstore"
)

// newApp returns the service's Runner and HTTP routes. The webhook Adds
// each event under its assignee; the Runner calls the pipeline with a
// user's events once they go quiet, one user at a time per worker, and
// every API call waits its turn at one token bucket, which a 429 pauses.
func newApp(cfg appConfig) (*pacer.Runner[string, Event], http.Handler, error) {
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	bucket := cfg.Limiter // with -redis: one bucket for every instance
	if bucket == nil {
		b, err := ratelimit.NewBucket(ratelimit.BucketConfig{Rate: cfg.Rate, Burst: cfg.Burst})
		if err != nil {
			return nil, nil, err
		}
		bucket = b
	}
	rc := pacer.Config[string, Event]{
		Debounce: cfg.Debounce, // a user's edits have gone quiet...
		MaxWait:  cfg.MaxWait,  // ...or the first has waited this long
		Workers:  cfg.Workers,  // users handled at once
		// Waits of 250 ms, 1 s, 2 s: three retries after the first try.
		Retry:  pacer.Backoff{Initial: 250 * time.Millisecond, Multiplier: 4, Max: 2 * time.Second, Attempts: 4},
		Logger: cfg.Logger,
	}
	// The transport pauses the bucket on a 429 and retries; with an
	// adaptive debounce the 429 reaches the Runner (see client.do), which
	// lengthens the debounce and runs the user again after the Retry-After.
	retries := 3
	if cfg.Adaptive > cfg.Debounce {
		rc.Adaptive, retries = pacer.Adaptive{Max: cfg.Adaptive}, -1
	}
	if cfg.Store != nil { // -redis: one queue for every instance, a run holds a lease
		rc.Store, rc.Name, rc.LeaseTTL = cfg.Store, "nextup", cfg.LeaseTTL
	}
	hc := &http.Client{Transport: &ratelimit.Transport{Base: cfg.Base, Limiter: bucket, MaxRetries: retries}}
	handler := (&pipeline{api: &client{base: cfg.APIURL, token: cfg.Token, hc: hc}, today: cfg.Today, log: cfg.Logger}).handle
	if o := cfg.Observer; o != nil { // the demo counts what happens
		rc.OnEvent, handler = o.onEvent, o.wrap(handler)
	}
	runner, err := pacer.New(rc, handler)
	if err != nil {
		return nil, nil, fmt.Errorf("nextup: %w", err)
	}
	hook := &webhook{secret: cfg.Secret, enqueue: runner.Add, now: time.Now, log: cfg.Logger}
	return runner, routes(runner, hook, bucket), nil
}

// serve runs the service until ctx ends, then stops taking webhooks and
// lets the Runner finish what is queued (with -redis: the runs in progress;
// the rest stays in Redis for the other instances).
func serve(ctx context.Context, cfg appConfig) error {
	closeRedis, err := openRedis(ctx, &cfg)
	defer closeRedis()
	if err != nil {
		return err
	}
	runner, routes, err := newApp(cfg)
	if err != nil {
		return err
	}
	srv, err := hookhttp.Listen(cfg.Listen, routes)
	if err != nil {
		return err
	}
	cfg.Logger.Info("listening", "webhook", srv.URL()+"/webhook", "api", cfg.APIURL, "pid", os.Getpid())
	ran := make(chan error, 1) // Run until Shutdown, which lets the runs in progress finish
	go func() { ran <- runner.Run(context.Background()) }()
	<-ctx.Done()
	cfg.Logger.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = errors.Join(srv.Shutdown(shutCtx), runner.Shutdown(shutCtx))
	// A Run that had not begun when Shutdown did returns ErrClosed.
	if rerr := <-ran; !errors.Is(rerr, pacer.ErrClosed) {
		err = errors.Join(err, rerr)
	}
	return err
}

// openRedis opens what -redis shares with the other instances, under one
// key prefix: the Runner's store, and the task API's bucket with its pause.
// The caller must call closeAll, even after an error.
func openRedis(ctx context.Context, cfg *appConfig) (closeAll func(), err error) {
	if cfg.RedisURL == "" {
		return func() {}, nil
	}
	opt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		return func() {}, fmt.Errorf("-redis: %w", err)
	}
	rdb := redis.NewClient(opt)
	st, err := redisstore.New(ctx, rdb, redisstore.Config{Prefix: cfg.RedisPrefix})
	if err != nil {
		return func() { rdb.Close() }, fmt.Errorf("-redis %s: %w", cfg.RedisURL, err)
	}
	lim, err := redisrate.NewBucket(ctx, rdb, redisrate.BucketConfig{Rate: cfg.Rate, Burst: cfg.Burst, Name: "tasks-api", Prefix: cfg.RedisPrefix})
	cfg.Store, cfg.Limiter = st, lim
	return func() { st.Close(); rdb.Close() }, err
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	switch {
	case err != nil:
	case cfg.FakeAPI != "":
		err = serveFake(ctx, cfg, os.Stdout)
	case cfg.APIURL == "":
		err = runDemo(ctx, cfg, os.Stdout)
	default:
		err = serve(ctx, cfg)
	}
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "notion-nextup:", err)
		if errors.As(err, new(usageError)) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
