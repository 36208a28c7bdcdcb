// Command ntnsync mirrors Notion pages into Markdown files, fed by Notion's
// webhooks: each change is put on a durable on-disk queue before the webhook
// is answered, a worker syncs queued pages in the background under the page
// API's rate limit, and SIGINT or SIGTERM stops intake, lets the worker
// finish and commits a manifest.
//
// Without -api-url it runs an embedded demo against a fake page API and
// exits 0 only if the demo's checks held. See README.md.
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

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is the program: it parses args, runs, and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("ntnsync", flag.ContinueOnError)
	flags.SetOutput(stderr)
	var (
		addr     = flags.String("listen", "127.0.0.1:8080", "webhook listen address (the demo picks a free loopback port unless set)")
		dir      = flags.String("dir", "", "directory holding queue/ and pages/ (demo: a new temporary directory unless set)")
		apiURL   = flags.String("api-url", os.Getenv("NTNSYNC_API_URL"), "page API base URL; empty runs the embedded demo ($NTNSYNC_API_URL)")
		token    = flags.String("api-token", os.Getenv("NTNSYNC_API_TOKEN"), "page API bearer token ($NTNSYNC_API_TOKEN)")
		secret   = flags.String("secret", os.Getenv("NTNSYNC_WEBHOOK_SECRET"), "webhook HMAC-SHA256 secret; empty skips the check ($NTNSYNC_WEBHOOK_SECRET)")
		rate     = flags.Float64("rate", 3, "page API requests per second")
		burst    = flags.Int("burst", 3, "page API burst")
		workers  = flags.Int("workers", 2, "pages fetched at once")
		retry    = flags.Duration("retry", 500*time.Millisecond, "first retry wait of a failed page; it doubles up to -retry-max (demo: 200ms unless set)")
		retryMax = flags.Duration("retry-max", time.Minute, "longest retry wait")
		grace    = flags.Duration("grace", 30*time.Second, "how long a shutdown waits for the worker to drain the queue")
		fakeAddr = flags.String("fake-api", "", "only serve the demo's fake page API on this address, to try real mode locally")
		verbose  = flags.Bool("v", false, "log every sync")
	)
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	set := map[string]bool{}
	flags.Visit(func(f *flag.Flag) { set[f.Name] = true })

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	cfg := appConfig{
		APIURL: *apiURL, Token: *token, Secret: []byte(*secret),
		Rate: *rate, Burst: *burst, Workers: *workers,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch {
	case *fakeAddr != "":
		err = serveFake(ctx, *fakeAddr)
	case cfg.APIURL == "":
		if !set["listen"] {
			*addr = "127.0.0.1:0"
		}
		if !set["retry"] {
			*retry = 200 * time.Millisecond
		}
		if !set["retry-max"] {
			*retryMax = 2 * time.Second
		}
		cfg.Backoff = backoff(*retry, *retryMax)
		err = runDemo(ctx, cfg, *addr, *dir, stdout)
	default:
		if *dir == "" {
			*dir = "ntnsync-data"
		}
		cfg.QueueDir, cfg.OutDir = filepath.Join(*dir, "queue"), filepath.Join(*dir, "pages")
		cfg.Backoff = backoff(*retry, *retryMax)
		err = serve(ctx, cfg, *addr, *grace)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ntnsync:", err)
		return 1
	}
	return 0
}

// runDemo plays the embedded scenario over loopback and prints its report.
func runDemo(ctx context.Context, cfg appConfig, addr, dir string, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if dir == "" {
		tmp, err := os.MkdirTemp("", "ntnsync-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	cfg.QueueDir, cfg.OutDir = filepath.Join(dir, "queue"), filepath.Join(dir, "pages")
	if len(cfg.Secret) == 0 {
		cfg.Secret = []byte("demo-secret")
	}
	fake := newDemoNotion(30*time.Millisecond, 4, time.Now())
	apiSrv, err := hookhttp.Listen("127.0.0.1:0", fake)
	if err != nil {
		return err
	}
	defer apiSrv.Shutdown(context.Background())
	cfg.APIURL = apiSrv.URL()

	expose := func(a *app) (poster, func(context.Context) error, error) {
		srv, err := hookhttp.Listen(addr, routes(a))
		if err != nil {
			return nil, nil, err
		}
		return hookhttp.PostJSON(http.DefaultClient, srv.URL()+"/webhook"), srv.Shutdown, nil
	}
	fmt.Fprintf(stdout, "ntnsync demo in %s: %d pages, fake page API at %s paced at %g req/s (burst %d), every 4th fetch fails\n",
		dir, len(demoPages), apiSrv.URL(), cfg.Rate, cfg.Burst)
	d := &demo{cfg: cfg, fake: fake, expose: expose, gap: 20 * time.Millisecond}
	rep, err := d.run(ctx)
	if err != nil {
		return err
	}
	rep.print(stdout)
	if !rep.ok() {
		return errors.New("demo checks failed")
	}
	return nil
}

// serve runs the sync for real until SIGINT or SIGTERM, then stops intake,
// lets the worker finish and drain the queue (up to grace) and commits.
func serve(ctx context.Context, cfg appConfig, addr string, grace time.Duration) error {
	a, err := newApp(cfg)
	if err != nil {
		return err
	}
	srv, err := hookhttp.Listen(addr, routes(a))
	if err != nil {
		return err
	}
	cfg.Logger.Warn("listening", "webhook", srv.URL()+"/webhook", "api", cfg.APIURL, "queue", cfg.QueueDir, "pages", cfg.OutDir)
	runCtx, stopRun := context.WithCancel(context.Background())
	running := make(chan struct{})
	go func() { defer close(running); a.worker.run(runCtx) }()

	<-ctx.Done()
	cfg.Logger.Warn("shutting down: intake stopped, draining the queue")
	shutCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err = srv.Shutdown(shutCtx)
	a.hook.stop()
	stopRun()
	<-running
	if derr := a.worker.drain(shutCtx); derr != nil {
		cfg.Logger.Warn("queue not empty at shutdown; it will be synced on the next start", "err", derr)
	}
	m, cerr := a.st.commit(time.Now())
	if err == nil {
		err = cerr
	}
	cfg.Logger.Warn("committed", "pages", len(m.Pages), "commit", m.Commits)
	return err
}

// serveFake serves the demo's fake page API until SIGINT or SIGTERM.
func serveFake(ctx context.Context, addr string) error {
	srv, err := hookhttp.Listen(addr, newDemoNotion(30*time.Millisecond, 4, time.Now()))
	if err != nil {
		return err
	}
	fmt.Printf("fake page API at %s (pages %v; every 4th fetch fails)\n", srv.URL(), demoPages)
	<-ctx.Done()
	return srv.Shutdown(context.Background())
}
