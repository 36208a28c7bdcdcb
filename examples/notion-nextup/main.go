// Command notion-nextup keeps every person's task list in order: when a
// task changes, it waits until that person's edits go quiet, then ranks
// their open tasks, projects completion dates in business days and writes
// back only what changed, all under the task API's 3 requests per second.
//
// Without -api-url it runs an embedded demo against a fake task API and
// exits 0 only if the demo's checks held; with -redis as well, the demo
// runs several instances of the program on one Redis. See README.md.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var usage usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "notion-nextup:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "notion-nextup:", err)
		os.Exit(1)
	}
}

// A usageError is a command line the program cannot run: main exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run runs the program with the command-line arguments args (without the
// program's name), printing the demo's report to stdout and logs to
// stderr, until ctx ends or, for the demo, the scenario is over.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("notion-nextup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addr      = fs.String("listen", "127.0.0.1:8080", "webhook listen address (the demo picks a free loopback port unless set)")
		apiURL    = fs.String("api-url", os.Getenv("NEXTUP_API_URL"), "task API base URL; empty runs the embedded demo ($NEXTUP_API_URL)")
		token     = fs.String("api-token", os.Getenv("NEXTUP_API_TOKEN"), "task API bearer token ($NEXTUP_API_TOKEN)")
		secret    = fs.String("secret", os.Getenv("NEXTUP_WEBHOOK_SECRET"), "webhook HMAC-SHA256 secret; empty skips the check ($NEXTUP_WEBHOOK_SECRET)")
		rate      = fs.Float64("rate", 3, "task API requests per second, all users (and, with -redis, all instances) together")
		burst     = fs.Int("burst", 3, "task API burst")
		debounce  = fs.Duration("debounce", 5*time.Second, "quiet time per user before a run (demo: 400ms unless set, 300ms with -redis)")
		maxWait   = fs.Duration("max-wait", 15*time.Second, "longest a user waits while edits keep coming (demo: 1.5s unless set, 1s with -redis)")
		adaptive  = fs.Duration("adaptive", 0, "if > -debounce, let the debounce grow up to this under backlog or 429s")
		workers   = fs.Int("workers", 1, "users processed at once (per instance)")
		redisURL  = fs.String("redis", "", "keep the debounce, the queue, the rate limit and its pause in Redis at this URL (redis://host:6379/0), shared by every instance with the same URL and -redis-prefix; empty keeps them in the process")
		prefix    = fs.String("redis-prefix", "nextup", "with -redis: the prefix of every Redis key; instances with the same prefix share their users' queue and the API's limit (demo: a fresh one per run)")
		lease     = fs.Duration("lease", 30*time.Second, "with -redis: how long an instance that died keeps its user from the others (renewed every third of it during a run; demo: 2s unless set)")
		instances = fs.Int("instances", 3, "demo with -redis: instances of this program to run, behind one webhook stream")
		fakeAddr  = fs.String("fake-api", "", "only serve the demo's fake task API on this address, to try real mode locally")
		verbose   = fs.Bool("v", false, "log more: every run in the demo (with -redis, every instance's log), every event for real")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	demo := *apiURL == "" && *fakeAddr == ""
	switch {
	case fs.NArg() > 0:
		return usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case set["instances"] && !(demo && *redisURL != ""):
		return usageError{"-instances is for the demo with -redis; for real, start one process per instance with the same -redis and -redis-prefix"}
	case demo && *redisURL != "" && *instances < 2:
		return usageError{fmt.Sprintf("-instances must be at least 2, got %d", *instances)}
	}

	// Real runs log every run (-v: every event); the demo logs errors
	// only (-v: every run) so its report stays readable.
	level := slog.LevelInfo
	switch {
	case demo && *verbose:
	case demo:
		level = slog.LevelError
	case *verbose:
		level = slog.LevelDebug
	}
	cfg := appConfig{
		APIURL: *apiURL, Token: *token, Secret: []byte(*secret),
		Rate: *rate, Burst: *burst,
		Debounce: *debounce, MaxWait: *maxWait, Adaptive: *adaptive, Workers: *workers,
		LeaseTTL: *lease,
		Logger:   slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})),
	}
	defaultFor := func(name string, d *time.Duration, def time.Duration) {
		if !set[name] {
			*d = def
		}
	}
	switch {
	case *fakeAddr != "":
		return serveFake(ctx, *fakeAddr, cfg.Rate, cfg.Burst, stdout)
	case demo && *redisURL != "":
		defaultFor("debounce", &cfg.Debounce, 300*time.Millisecond)
		defaultFor("max-wait", &cfg.MaxWait, time.Second)
		defaultFor("lease", &cfg.LeaseTTL, 2*time.Second)
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		cc := clusterConfig{
			Command:   func(args ...string) *exec.Cmd { return exec.Command(exe, args...) },
			RedisURL:  *redisURL,
			Prefix:    "nextup-demo-" + randomSuffix(),
			Instances: *instances,
			App:       cfg,
		}
		if *verbose {
			cc.Logs = stderr
		}
		return runClusterDemo(ctx, cc, stdout)
	case demo:
		defaultFor("debounce", &cfg.Debounce, 400*time.Millisecond)
		defaultFor("max-wait", &cfg.MaxWait, 1500*time.Millisecond)
		if !set["listen"] {
			*addr = "127.0.0.1:0"
		}
		return runDemo(ctx, cfg, *addr, stdout)
	}
	if *redisURL != "" {
		shared, err := openRedis(ctx, *redisURL, *prefix, cfg.Rate, cfg.Burst)
		if err != nil {
			return err
		}
		defer shared.Close()
		cfg.Store, cfg.Limiter = shared.store, shared.limiter
	}
	return serve(ctx, cfg, *addr)
}

// randomSuffix returns 8 random hex digits, for names no earlier run used.
func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// runDemo plays the embedded scenario over loopback and prints its report.
func runDemo(ctx context.Context, cfg appConfig, addr string, stdout io.Writer) error {
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
	fmt.Fprintf(stdout, "notion-nextup demo: webhook at %s/webhook, fake task API at %s; debounce %v, max-wait %v, %d worker(s)\n",
		hookSrv.URL(), apiSrv.URL(), cfg.Debounce, cfg.MaxWait, max(cfg.Workers, 1))
	d := &demo{fake: fake, app: a, secret: cfg.Secret, debounce: cfg.Debounce, maxWait: cfg.MaxWait,
		post: hookhttp.PostJSON(http.DefaultClient, hookSrv.URL()+"/webhook")}
	rep, err := d.run(ctx)
	if err != nil {
		return err
	}
	return printReport(stdout, rep)
}

// serve runs the service for real until SIGINT or SIGTERM: stop taking
// webhooks, let the Runner finish what is queued (with -redis: the runs in
// progress; the rest stays in Redis for the other instances), then exit.
func serve(ctx context.Context, cfg appConfig, addr string) error {
	a, err := newApp(cfg)
	if err != nil {
		return err
	}
	srv, err := hookhttp.Listen(addr, routes(a))
	if err != nil {
		return err
	}
	cfg.Logger.Info("listening", "webhook", srv.URL()+"/webhook", "api", cfg.APIURL, "pid", os.Getpid())
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
	// A Run that had not begun when Shutdown did returns ErrClosed: the
	// Shutdown did its work.
	if rerr := <-done; err == nil && rerr != nil && !errors.Is(rerr, context.Canceled) && !errors.Is(rerr, pacer.ErrClosed) {
		err = rerr
	}
	return err
}

// serveFake serves the demo's fake task API, loaded with the demo's tasks,
// until SIGINT or SIGTERM.
func serveFake(ctx context.Context, addr string, rate float64, burst int, stdout io.Writer) error {
	fake := newDemoAPI(rate, burst, time.Now)
	srv, err := hookhttp.Listen(addr, fake)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "fake task API at %s (users %v)\n", srv.URL(), demoUsers)
	<-ctx.Done()
	return srv.Shutdown(context.Background())
}
