// Command hook-ingest debounces hook events across processes.
//
// A hook runner starts one process per event:
//
//	hook-ingest event -session S [-event ID]
//
// Each process records its event in the session's state file, then takes
// the session's processing lock (mutex.LockFile, flock) and, once the
// session has been quiet for -quiet or its oldest pending event is -max-wait
// old, delivers all pending events as one batch. Run without arguments it
// plays a demo against a fake remote on loopback and checks the result.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	code, err := dispatch(ctx, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "hook-ingest:", err)
	}
	os.Exit(code)
}

// dispatch runs the subcommand named by args[0]: event, drain, or (default)
// demo. It returns the exit code.
func dispatch(ctx context.Context, args []string) (int, error) {
	cmd := "demo"
	if len(args) > 0 && (args[0] == "event" || args[0] == "drain" || args[0] == "demo") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "event", "drain":
		return hook(ctx, cmd, args)
	default:
		return demo(ctx, args)
	}
}

// hook runs one event or drain process.
func hook(ctx context.Context, cmd string, args []string) (int, error) {
	fs := flag.NewFlagSet("hook-ingest "+cmd, flag.ContinueOnError)
	sessionID := fs.String("session", os.Getenv("HOOK_INGEST_SESSION"), "session `id` (env HOOK_INGEST_SESSION)")
	eventID := fs.String("event", "", "event `id` (default: time and process id)")
	dir := fs.String("dir", env("HOOK_INGEST_DIR", filepath.Join(os.TempDir(), "hook-ingest")), "state `directory` (env HOOK_INGEST_DIR)")
	quiet := fs.Duration("quiet", envDuration("HOOK_INGEST_QUIET", 2*time.Second), "process a session once it has been quiet this long (env HOOK_INGEST_QUIET)")
	maxWait := fs.Duration("max-wait", envDuration("HOOK_INGEST_MAX_WAIT", 2*time.Second), "but no later than this after its oldest pending event; 0 = unbounded (env HOOK_INGEST_MAX_WAIT)")
	url := fs.String("url", os.Getenv("HOOK_INGEST_URL"), "POST each batch as JSON to this `URL`; empty prints batches to stdout (env HOOK_INGEST_URL)")
	token := fs.String("token", os.Getenv("HOOK_INGEST_TOKEN"), "bearer `token` for the URL (env HOOK_INGEST_TOKEN)")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long; pending events stay for the next process")
	crashOnce := fs.Bool("crash-once", false, "demo: the session's first processor kills itself after claiming a batch")
	gate := fs.Bool("start-gate", false, "demo: print a line once started, then record the event at the RFC 3339 time read from stdin")
	if err := fs.Parse(args); err != nil {
		return 2, nil
	}
	switch {
	case fs.NArg() > 0:
		return 2, fmt.Errorf("unexpected arguments %q", fs.Args())
	case *sessionID == "":
		return 2, errors.New("-session is required")
	case *quiet <= 0:
		return 2, fmt.Errorf("-quiet must be > 0, got %v", *quiet)
	case *maxWait < 0:
		return 2, fmt.Errorf("-max-wait must be >= 0, got %v", *maxWait)
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return 1, err
	}
	p := params{Quiet: *quiet, MaxWait: *maxWait, CrashOnce: *crashOnce, Deliver: printDeliver(os.Stdout)}
	if *url != "" {
		p.Deliver = httpDeliver(&http.Client{Timeout: deliverTimeout}, *url, *token)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	s := newSession(*dir, *sessionID)
	own := ""
	if cmd == "event" {
		if *gate {
			if err := awaitStart(ctx); err != nil {
				return 1, err
			}
		}
		own = *eventID
		if own == "" {
			own = strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(os.Getpid())
		}
		if err := record(ctx, s, own); err != nil {
			return 1, err
		}
	}
	if err := process(ctx, p, s, own); err != nil {
		return 1, err
	}
	return 0, nil
}

// demo runs the embedded demo and reports whether its checks held.
func demo(ctx context.Context, args []string) (int, error) {
	fs := flag.NewFlagSet("hook-ingest", flag.ContinueOnError)
	var cfg config
	fs.StringVar(&cfg.Dir, "dir", "", "state `directory` (default: a temporary one, removed afterwards)")
	fs.DurationVar(&cfg.Quiet, "quiet", 200*time.Millisecond, "debounce quiet period")
	fs.DurationVar(&cfg.MaxWait, "max-wait", 600*time.Millisecond, "debounce max-wait")
	fs.DurationVar(&cfg.Work, "work", 50*time.Millisecond, "how long the fake remote takes per batch")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:0", "listen `address` of the fake remote")
	fs.StringVar(&cfg.Token, "token", "demo-token", "bearer `token` the fake remote expects")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return 2, nil
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("unknown command %q (want event, drain or demo)", fs.Arg(0))
	}
	if cfg.Quiet <= 0 || cfg.MaxWait < cfg.Quiet {
		return 2, fmt.Errorf("need 0 < -quiet <= -max-wait, got %v and %v", cfg.Quiet, cfg.MaxWait)
	}
	exe, err := os.Executable()
	if err != nil {
		return 1, err
	}
	cfg.Exe = exe
	cfg.Plans = defaultPlans(cfg.Quiet, cfg.MaxWait)
	r, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		return 1, err
	}
	if !r.OK() {
		return 1, nil
	}
	return 0, nil
}

// awaitStart is the child's side of the demo's start gate: it says it is up,
// reads the instant to start at from stdin and waits for it.
func awaitStart(ctx context.Context) error {
	fmt.Println("up")
	line, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		return fmt.Errorf("-start-gate: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(line))
	if err != nil {
		return fmt.Errorf("-start-gate: %w", err)
	}
	return sleep(ctx, time.Until(t))
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}
