package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// usage is the head of every -h: the subcommands. The flags of the one
// asked about follow.
const usage = `Usage:
  hook-ingest event -session ID [flags]
        record one event of the session, then process the session's
        pending events once they are due; run it once per hook event
  hook-ingest drain -session ID [flags]
        process whatever the session has pending, adding no event: from
        cron, or at shutdown, to flush a session whose last process died
  hook-ingest [demo] [flags]
        play the demo against a fake remote on loopback and check it
        (the default); exits 0 only if every check held

Run 'hook-ingest event -h' or 'hook-ingest drain -h' for their flags.
`

// dispatch runs the subcommand named by args[0]: event, drain, or (the
// default) demo; demo-event is the demo's own event process. It returns
// the exit code: 0, 1 on failure, 2 for a bad command line.
func dispatch(ctx context.Context, args []string) (int, error) {
	cmd := "demo"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "event", "drain", "demo-event":
		return hook(ctx, cmd, args)
	case "demo":
		return demo(ctx, args)
	default:
		fmt.Fprint(os.Stderr, usage)
		return 2, fmt.Errorf("unknown command %q (want event, drain or demo)", cmd)
	}
}

// parseFlags parses args with fs, whose usage starts with the
// subcommands. It returns the exit code to end with, if any: 0 after -h,
// 2 after a bad flag or argument (the flag package said which).
func parseFlags(fs *flag.FlagSet, args []string) (code int, exit bool) {
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fmt.Fprintf(fs.Output(), "\nFlags of %s:\n", fs.Name())
		fs.PrintDefaults()
	}
	switch err := fs.Parse(args); {
	case errors.Is(err, flag.ErrHelp):
		return 0, true
	case err != nil:
		return 2, true
	case fs.NArg() > 0:
		fmt.Fprintf(fs.Output(), "unexpected arguments %q\n", fs.Args())
		fs.Usage()
		return 2, true
	}
	return 0, false
}

// hookFlags are the flags of the event and drain processes.
type hookFlags struct {
	session, dir, url, token string
	quiet, maxWait, timeout  time.Duration
	event                    string // event only
	crashOnce, gate          bool   // demo-event only
}

// newHookFlags returns the FlagSet of cmd (event, drain or demo-event):
// each has only the flags it uses.
func newHookFlags(cmd string) (*flag.FlagSet, *hookFlags) {
	fs := flag.NewFlagSet("hook-ingest "+cmd, flag.ContinueOnError)
	f := &hookFlags{}
	fs.StringVar(&f.session, "session", os.Getenv("HOOK_INGEST_SESSION"), "session `id` (env HOOK_INGEST_SESSION)")
	if cmd != "drain" {
		fs.StringVar(&f.event, "event", "", "event `id` (default: time and process id)")
	}
	fs.StringVar(&f.dir, "dir", env("HOOK_INGEST_DIR", filepath.Join(os.TempDir(), "hook-ingest")), "state `directory` (env HOOK_INGEST_DIR)")
	fs.DurationVar(&f.quiet, "quiet", envDuration("HOOK_INGEST_QUIET", 2*time.Second), "process a session once it has been quiet this long (env HOOK_INGEST_QUIET)")
	fs.DurationVar(&f.maxWait, "max-wait", envDuration("HOOK_INGEST_MAX_WAIT", 2*time.Second), "but no later than this after its oldest pending event; 0 = unbounded (env HOOK_INGEST_MAX_WAIT)")
	fs.StringVar(&f.url, "url", os.Getenv("HOOK_INGEST_URL"), "POST each batch as JSON to this `URL`; empty prints batches to stdout (env HOOK_INGEST_URL)")
	fs.StringVar(&f.token, "token", os.Getenv("HOOK_INGEST_TOKEN"), "bearer `token` for the URL (env HOOK_INGEST_TOKEN)")
	fs.DurationVar(&f.timeout, "timeout", time.Minute, "give up after this long; pending events stay for the next process")
	if cmd == "demo-event" {
		fs.BoolVar(&f.crashOnce, "crash-once", false, "the session's first processor kills itself after claiming a batch")
		fs.BoolVar(&f.gate, "start-gate", false, "print a line once started, then record the event at the RFC 3339 time read from stdin")
	}
	return fs, f
}

// hook runs one event or drain process; demo-event is an event process
// with the demo's hooks.
func hook(ctx context.Context, cmd string, args []string) (int, error) {
	fs, f := newHookFlags(cmd)
	if code, exit := parseFlags(fs, args); exit {
		return code, nil
	}
	switch {
	case f.session == "":
		return 2, errors.New("-session is required")
	case f.quiet <= 0:
		return 2, fmt.Errorf("-quiet must be > 0, got %v", f.quiet)
	case f.maxWait < 0:
		return 2, fmt.Errorf("-max-wait must be >= 0, got %v", f.maxWait)
	}
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return 1, err
	}
	p := params{Quiet: f.quiet, MaxWait: f.maxWait, CrashOnce: f.crashOnce, Deliver: printDeliver(os.Stdout)}
	if f.url != "" {
		p.Deliver = httpDeliver(&http.Client{Timeout: deliverTimeout}, f.url, f.token)
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	s := newSession(f.dir, f.session)
	own := ""
	if cmd != "drain" {
		if f.gate {
			if err := awaitStart(ctx); err != nil {
				return 1, err
			}
		}
		own = f.event
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
	fs := flag.NewFlagSet("hook-ingest demo", flag.ContinueOnError)
	var cfg config
	fs.StringVar(&cfg.Dir, "dir", "", "state `directory` (default: a temporary one, removed afterwards)")
	fs.DurationVar(&cfg.Quiet, "quiet", 200*time.Millisecond, "debounce quiet period")
	fs.DurationVar(&cfg.MaxWait, "max-wait", 600*time.Millisecond, "debounce max-wait")
	fs.DurationVar(&cfg.Work, "work", 50*time.Millisecond, "how long the fake remote takes per batch")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:0", "listen `address` of the fake remote")
	fs.StringVar(&cfg.Token, "token", "demo-token", "bearer `token` the fake remote expects")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Second, "give up after this long")
	if code, exit := parseFlags(fs, args); exit {
		return code, nil
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
