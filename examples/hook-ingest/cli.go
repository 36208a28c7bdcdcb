package main

import (
	"cmp"
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
// default) demo. It returns the exit code: 0, 1 on failure, 2 for a bad
// command line.
func dispatch(ctx context.Context, args []string) (int, error) {
	cmd := "demo"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("hook-ingest "+cmd, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\nFlags of %s:\n", usage, fs.Name())
		fs.PrintDefaults()
	}
	switch cmd {
	case "event", "drain":
		return hook(ctx, fs, cmd == "event", args)
	case "demo":
		quiet := fs.Duration("quiet", 200*time.Millisecond, "debounce quiet period")
		maxWait := fs.Duration("max-wait", 600*time.Millisecond, "debounce max-wait")
		if code, exit := parse(fs, args); exit {
			return code, nil
		}
		if *quiet <= 0 || *maxWait < *quiet {
			return 2, fmt.Errorf("need 0 < -quiet <= -max-wait, got %v and %v", *quiet, *maxWait)
		}
		if ok, err := runDemo(ctx, *quiet, *maxWait, os.Stdout); !ok || err != nil {
			return 1, err
		}
		return 0, nil
	}
	fmt.Fprint(os.Stderr, usage)
	return 2, fmt.Errorf("unknown command %q (want event, drain or demo)", cmd)
}

// parse parses args with fs. It returns the exit code to end with, if any:
// 0 after -h, 2 after a bad flag or argument (the flag package said which).
func parse(fs *flag.FlagSet, args []string) (code int, exit bool) {
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

// hook runs one event process, or a drain process.
func hook(ctx context.Context, fs *flag.FlagSet, event bool, args []string) (int, error) {
	session := fs.String("session", os.Getenv("HOOK_INGEST_SESSION"), "session `id` (env HOOK_INGEST_SESSION)")
	id := ""
	if event {
		fs.StringVar(&id, "event", "", "event `id` (default: time and process id)")
	}
	dir := fs.String("dir", cmp.Or(os.Getenv("HOOK_INGEST_DIR"), filepath.Join(os.TempDir(), "hook-ingest")), "state `directory` (env HOOK_INGEST_DIR)")
	quiet := fs.Duration("quiet", envDuration("HOOK_INGEST_QUIET", 2*time.Second), "process a session once it has been quiet this long (env HOOK_INGEST_QUIET)")
	maxWait := fs.Duration("max-wait", envDuration("HOOK_INGEST_MAX_WAIT", 2*time.Second), "but no later than this after its oldest pending event; 0 = unbounded (env HOOK_INGEST_MAX_WAIT)")
	url := fs.String("url", os.Getenv("HOOK_INGEST_URL"), "POST each batch as JSON to this `URL`; empty prints batches to stdout (env HOOK_INGEST_URL)")
	token := fs.String("token", os.Getenv("HOOK_INGEST_TOKEN"), "bearer `token` for the URL (env HOOK_INGEST_TOKEN)")
	timeout := fs.Duration("timeout", time.Minute, "give up after this long; pending events stay for the next process")
	if code, exit := parse(fs, args); exit {
		return code, nil
	}
	switch {
	case *session == "":
		return 2, errors.New("-session is required")
	case *quiet <= 0:
		return 2, fmt.Errorf("-quiet must be > 0, got %v", *quiet)
	case *maxWait < 0:
		return 2, fmt.Errorf("-max-wait must be >= 0, got %v", *maxWait)
	}
	if err := os.MkdirAll(*dir, 0o700); err != nil {
		return 1, err
	}
	p := params{Quiet: *quiet, MaxWait: *maxWait, Deliver: printDeliver(os.Stdout)}
	if *url != "" {
		p.Deliver = httpDeliver(&http.Client{Timeout: deliverTimeout}, *url, *token)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	s := newSession(*dir, *session)
	if event {
		id = cmp.Or(id, strconv.FormatInt(time.Now().UnixNano(), 36)+"-"+strconv.Itoa(os.Getpid()))
		if err := record(ctx, s, id); err != nil {
			return 1, err
		}
	}
	if err := process(ctx, p, s, id); err != nil {
		return 1, err
	}
	return 0, nil
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}
