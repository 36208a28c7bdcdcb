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
	"path/filepath"
	"syscall"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// run is the program: it parses args, runs, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("ntnsync", flag.ContinueOnError)
	flags.SetOutput(stderr)
	var (
		addr     = flags.String("listen", "127.0.0.1:8080", "webhook listen address (the demo picks a free loopback port unless set)")
		dir      = flags.String("dir", "ntnsync-data", "directory holding queue/ and pages/ (the demo uses a new temporary directory unless set)")
		apiURL   = flags.String("api-url", os.Getenv("NTNSYNC_API_URL"), "page API base URL; empty runs the embedded demo ($NTNSYNC_API_URL)")
		token    = flags.String("api-token", os.Getenv("NTNSYNC_API_TOKEN"), "page API bearer token ($NTNSYNC_API_TOKEN)")
		secret   = flags.String("secret", os.Getenv("NTNSYNC_WEBHOOK_SECRET"), "webhook HMAC-SHA256 secret; empty skips the check ($NTNSYNC_WEBHOOK_SECRET)")
		rate     = flags.Float64("rate", 3, "page API requests per second")
		burst    = flags.Int("burst", 3, "page API burst")
		workers  = flags.Int("workers", 2, "pages synced at once")
		debounce = flags.Duration("debounce", time.Second, "a page is synced once its changes have been quiet this long; 0 syncs at once (demo: 100ms unless set)")
		maxWait  = flags.Duration("max-wait", 10*time.Second, "a page that keeps changing is still synced this long after its first change; 0: no bound (demo: 1s unless set)")
		retry    = flags.Duration("retry", 500*time.Millisecond, "first retry wait of a failed page; it doubles up to -retry-max (demo: 200ms unless set)")
		retryMax = flags.Duration("retry-max", time.Minute, "longest retry wait")
		grace    = flags.Duration("grace", 30*time.Second, "how long a shutdown waits for the queued pages to sync; what is left stays queued for the next start")
		fakeAddr = flags.String("fake-api", "", "only serve the demo's fake page API on this address, to try real mode locally")
		verbose  = flags.Bool("v", false, "log every sync")
	)
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	demo := *apiURL == "" && *fakeAddr == ""
	if demo { // the demo's own defaults, for the flags not set
		set := map[string]bool{}
		flags.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range map[string]string{"listen": "127.0.0.1:0", "dir": "", "debounce": "100ms", "max-wait": "1s", "retry": "200ms", "retry-max": "2s"} {
			if !set[name] {
				_ = flags.Set(name, v)
			}
		}
		if *secret == "" {
			*secret = "demo-secret"
		}
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	cfg := appConfig{
		APIURL: *apiURL, Token: *token,
		Rate: *rate, Burst: *burst, Workers: *workers,
		Debounce: *debounce, MaxWait: *maxWait, Backoff: backoff(*retry, *retryMax),
		QueueDir: filepath.Join(*dir, "queue"), OutDir: filepath.Join(*dir, "pages"), Secret: []byte(*secret),
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	}
	if cfg.Debounce == 0 {
		cfg.MaxWait = 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	switch {
	case *fakeAddr != "":
		err = serveFake(ctx, *fakeAddr, stdout)
	case demo:
		err = runDemo(ctx, cfg, *addr, *dir, stdout)
	default:
		err = serve(ctx, cfg, *addr, *grace)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ntnsync:", err)
		return 1
	}
	return 0
}

// serve runs the sync for real until SIGINT or SIGTERM, then stops intake
// and syncs every page still queued for up to grace. What is left then
// stays queued for the next start, which is no error: nothing is lost.
func serve(ctx context.Context, cfg appConfig, addr string, grace time.Duration) error {
	a, err := openApp(cfg)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/webhook", a.hook)
	srv, err := listen(addr, mux, defaultTimeouts)
	if err != nil {
		a.abandon()
		return err
	}
	queued, _ := a.q.len()
	cfg.Logger.Warn("listening", "webhook", srv.url()+"/webhook", "api", cfg.APIURL, "queue", cfg.QueueDir, "pages", cfg.OutDir, "queued", queued)
	running := make(chan error, 1)
	go func() { running <- a.run(context.Background()) }()

	<-ctx.Done()
	cfg.Logger.Warn("shutting down: intake stopped, syncing what is queued")
	shutCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	a.hook.stop()
	stalled, err := srv.shutdown(shutCtx)
	if stalled > 0 {
		cfg.Logger.Warn("closed connections of clients that did not finish their request", "connections", stalled)
	}
	if serr := a.shutdown(shutCtx); serr != nil {
		left, _ := a.q.len()
		cfg.Logger.Warn("shutdown ran out of grace; the pages left are synced on the next start", "queued", left, "err", serr)
	}
	if rerr := <-running; err == nil && rerr != nil {
		err = rerr
	}
	m, _ := readManifest(cfg.OutDir)
	cfg.Logger.Warn("stopped", "pages", len(m.Pages), "manifest", filepath.Join(cfg.OutDir, manifestName))
	return err
}

// serveFake serves the demo's fake page API until SIGINT or SIGTERM.
func serveFake(ctx context.Context, addr string, stdout io.Writer) error {
	srv, err := hookhttp.Listen(addr, newDemoNotion(30*time.Millisecond, 4, time.Now()))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fake page API at %s (pages %v; every 4th fetch fails)\n", srv.URL(), demoPages)
	<-ctx.Done()
	return srv.Shutdown(context.Background())
}
