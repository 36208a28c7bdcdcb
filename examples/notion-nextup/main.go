// Command notion-nextup keeps every person's task list in order: when a
// task changes, it waits until that person's edits go quiet, then ranks
// their open tasks, projects completion dates in business days and writes
// back only what changed, all under the task API's 3 requests per second.
//
// Without -api-url it runs an embedded demo against a fake task API and
// exits 0 only if the demo's checks held. See README.md.
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

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

func main() {
	var (
		addr     = flag.String("listen", "127.0.0.1:8080", "webhook listen address (the demo picks a free loopback port unless set)")
		apiURL   = flag.String("api-url", os.Getenv("NEXTUP_API_URL"), "task API base URL; empty runs the embedded demo ($NEXTUP_API_URL)")
		token    = flag.String("api-token", os.Getenv("NEXTUP_API_TOKEN"), "task API bearer token ($NEXTUP_API_TOKEN)")
		secret   = flag.String("secret", os.Getenv("NEXTUP_WEBHOOK_SECRET"), "webhook HMAC-SHA256 secret; empty skips the check ($NEXTUP_WEBHOOK_SECRET)")
		rate     = flag.Float64("rate", 3, "task API requests per second, all users together")
		burst    = flag.Int("burst", 3, "task API burst")
		debounce = flag.Duration("debounce", 5*time.Second, "quiet time per user before a run (demo: 400ms unless set)")
		maxWait  = flag.Duration("max-wait", 15*time.Second, "longest a user waits while edits keep coming (demo: 1.5s unless set)")
		adaptive = flag.Duration("adaptive", 0, "if > -debounce, let the debounce grow up to this under backlog or 429s")
		workers  = flag.Int("workers", 1, "users processed at once")
		fakeAddr = flag.String("fake-api", "", "only serve the demo's fake task API on this address, to try real mode locally")
		verbose  = flag.Bool("v", false, "log more: every run in the demo, every event for real")
	)
	flag.Parse()
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })

	// Real runs log every run (-v: every event); the demo logs errors
	// only (-v: every run) so its report stays readable.
	level := slog.LevelInfo
	switch {
	case *apiURL == "" && *verbose:
	case *apiURL == "":
		level = slog.LevelError
	case *verbose:
		level = slog.LevelDebug
	}
	cfg := appConfig{
		APIURL: *apiURL, Token: *token, Secret: []byte(*secret),
		Rate: *rate, Burst: *burst,
		Debounce: *debounce, MaxWait: *maxWait, Adaptive: *adaptive, Workers: *workers,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})),
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch {
	case *fakeAddr != "":
		err = serveFake(ctx, *fakeAddr, cfg.Rate, cfg.Burst)
	case cfg.APIURL == "":
		if !set["debounce"] {
			cfg.Debounce = 400 * time.Millisecond
		}
		if !set["max-wait"] {
			cfg.MaxWait = 1500 * time.Millisecond
		}
		if !set["listen"] {
			*addr = "127.0.0.1:0"
		}
		err = runDemo(ctx, cfg, *addr)
	default:
		err = serve(ctx, cfg, *addr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "notion-nextup:", err)
		os.Exit(1)
	}
}

// runDemo plays the embedded scenario over loopback and prints its report.
func runDemo(ctx context.Context, cfg appConfig, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if len(cfg.Secret) == 0 {
		cfg.Secret = []byte("demo-secret")
	}
	fake := newDemoAPI(cfg.Rate, cfg.Burst, time.Now)
	apiSrv, err := hookhttp.Listen("127.0.0.1:0", fake)
	if err != nil {
		return err
	}
	defer apiSrv.Shutdown(context.Background())
	cfg.APIURL = apiSrv.URL()
	cfg.Today = func() time.Time { t, _ := time.Parse(dateLayout, demoToday); return t }
	a, err := newApp(cfg)
	if err != nil {
		return err
	}
	hookSrv, err := hookhttp.Listen(addr, routes(a))
	if err != nil {
		return err
	}
	defer hookSrv.Shutdown(context.Background())
	fmt.Printf("notion-nextup demo: webhook at %s/webhook, fake task API at %s; debounce %v, max-wait %v, %d worker(s)\n",
		hookSrv.URL(), apiSrv.URL(), cfg.Debounce, cfg.MaxWait, max(cfg.Workers, 1))
	d := &demo{fake: fake, app: a, secret: cfg.Secret, debounce: cfg.Debounce, maxWait: cfg.MaxWait,
		post: hookhttp.PostJSON(http.DefaultClient, hookSrv.URL()+"/webhook")}
	rep, err := d.run(ctx)
	if err != nil {
		return err
	}
	rep.print(os.Stdout)
	if !rep.ok() {
		return errors.New("demo checks failed")
	}
	return nil
}

// serve runs the service for real until SIGINT or SIGTERM: stop taking
// webhooks, let the Runner finish what is queued, then exit.
func serve(ctx context.Context, cfg appConfig, addr string) error {
	a, err := newApp(cfg)
	if err != nil {
		return err
	}
	srv, err := hookhttp.Listen(addr, routes(a))
	if err != nil {
		return err
	}
	cfg.Logger.Info("listening", "webhook", srv.URL()+"/webhook", "api", cfg.APIURL)
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	done := make(chan error, 1)
	go func() { done <- a.runner.Run(runCtx) }()

	<-ctx.Done()
	cfg.Logger.Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = srv.Shutdown(shutCtx)
	if serr := a.runner.Shutdown(shutCtx); err == nil {
		err = serr
	}
	stopRun()
	if rerr := <-done; err == nil && rerr != nil && !errors.Is(rerr, context.Canceled) {
		err = rerr
	}
	return err
}

// serveFake serves the demo's fake task API, loaded with the demo's tasks,
// until SIGINT or SIGTERM.
func serveFake(ctx context.Context, addr string, rate float64, burst int) error {
	fake := newDemoAPI(rate, burst, time.Now)
	srv, err := hookhttp.Listen(addr, fake)
	if err != nil {
		return err
	}
	fmt.Printf("fake task API at %s (users %v)\n", srv.URL(), demoUsers)
	<-ctx.Done()
	return srv.Shutdown(context.Background())
}
