package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/pacerkit/pacer/ratelimit"
)

// config configures one run of the program.
type config struct {
	State     string           // state file
	Rate      float64          // messages per minute per account
	Burst     int              // messages an idle account may send at once
	Parallel  int              // groups in flight per account
	Jitter    [2]time.Duration // pause between two parts of a group, uniform in [min, max)
	Attempts  int              // handler calls per batch of two groups
	Backoff   time.Duration    // pause before the first retry, doubling
	Clock     clock.Clock      // the time; clock.New() for real use
	Sender    sender           // the messaging service
	Reminders []reminder       // reminders to add to the progress, if new
	SaveEvery time.Duration    // least time between two writes of the progress

	// Shared by the instances with -redis (openShared); nil: this
	// process's own, and the state file.
	Locks    accountLocks
	Limits   ratelimit.KeyGate[string] // the accounts' buckets
	Progress backend
}

// accountLocks gives each account one fan-out at a time: a mutex.Keyed in
// one process, a redismutex.Locker across instances (fn's ctx then ends if
// the lock is lost, and redismutex.FenceFrom reads its fence).
type accountLocks interface {
	Do(ctx context.Context, account string, fn func(ctx context.Context) error) error
}

func (c config) validate() error {
	switch {
	case !(c.Rate > 0):
		return fmt.Errorf("rate must be > 0 messages per minute, got %v", c.Rate)
	case c.Burst < 1:
		return fmt.Errorf("burst must be >= 1, got %d", c.Burst)
	case c.Parallel < 1:
		return fmt.Errorf("parallel must be >= 1, got %d", c.Parallel)
	case c.Attempts < 1:
		return fmt.Errorf("attempts must be >= 1, got %d", c.Attempts)
	case c.Jitter[0] < 0 || c.Jitter[1] < c.Jitter[0]:
		return fmt.Errorf("bad jitter range %v-%v", c.Jitter[0], c.Jitter[1])
	}
	return nil
}

const usage = `Usage: whatsapp-fanout [flags]

Sends reminders to many groups per account, paced, inside each reminder's
delivery window. Without -reminders it plays a demo against an in-process
fake service and checks it. There are no subcommands.

Flags:
`

// demoFlags are the demo's settings, for the flags not given: 500 messages
// per second per account stand for the real 40 per minute, and an empty
// state file is a new one in a temporary directory.
var demoFlags = map[string]string{"rate": "30000", "burst": "5", "attempts": "4", "backoff": "2ms", "jitter-min": "1ms", "jitter-max": "3ms", "state": ""}

// start parses the flags and runs the demo, or the real thing when
// -reminders is given. It returns the exit code: -h prints the usage on out
// and returns 0; a wrong flag or argument prints it on errOut and returns 2.
func start(ctx context.Context, args []string, out, errOut io.Writer) (int, error) {
	fs := flag.NewFlagSet("whatsapp-fanout", flag.ContinueOnError)
	fs.SetOutput(errOut) // parse errors
	fs.Usage = func() {} // printed below, on out or errOut
	printUsage := func(w io.Writer) {
		fmt.Fprint(w, usage)
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	cfg := config{Clock: clock.New()}
	reminders := fs.String("reminders", "", "JSON `file` of reminders to send; without it, run the demo")
	fs.StringVar(&cfg.State, "state", "whatsapp-fanout.state.json", "state `file` (demo: a new one in a temporary directory)")
	url := fs.String("url", os.Getenv("FANOUT_URL"), "messaging gateway base `URL` (env FANOUT_URL); empty: the in-process fake")
	token := fs.String("token", os.Getenv("FANOUT_TOKEN"), "bearer `token` for the gateway (env FANOUT_TOKEN)")
	fs.Float64Var(&cfg.Rate, "rate", 40, "messages per minute per account")
	fs.IntVar(&cfg.Burst, "burst", 1, "messages an idle account may send at once")
	fs.IntVar(&cfg.Parallel, "parallel", 3, "groups in flight per account")
	fs.DurationVar(&cfg.Jitter[0], "jitter-min", 500*time.Millisecond, "least pause between two parts of a group")
	fs.DurationVar(&cfg.Jitter[1], "jitter-max", 1500*time.Millisecond, "longest pause between two parts of a group")
	fs.IntVar(&cfg.Attempts, "attempts", 3, "tries per batch of two groups (the Runner's Retry.Attempts)")
	fs.DurationVar(&cfg.Backoff, "backoff", 2*time.Second, "pause before the first retry, doubling")
	redisURL := fs.String("redis", "", "Redis `URL` (e.g. redis://127.0.0.1:6379/0) where several instances share the account locks and buckets and the progress, instead of -state")
	redisPrefix := fs.String("redis-prefix", "pacer", "start of the program's Redis keys; instances with the same -redis and -redis-prefix work together")
	lockTTL := fs.Duration("lock-ttl", 10*time.Second, "with -redis: lease of an account lock, renewed while held; a killed instance's lock lapses after it")
	failRate := fs.Float64("fail-rate", 0.02, "fake service: share of attempts that fail")
	groups := fs.Int("groups", 1000, "demo: groups per reminder")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		printUsage(out)
		return 0, nil
	} else if err != nil {
		printUsage(errOut) // after the flag package's line saying what is wrong
		return 2, nil
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	switch {
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected arguments %q", fs.Args())
	case *reminders == "" && *redisURL != "":
		err = errors.New("-redis needs -reminders: the demo runs in one process")
	case set["state"] && *redisURL != "":
		err = errors.New("-state and -redis exclude each other: with -redis the progress is kept in Redis")
	}
	if err != nil {
		printUsage(errOut)
		return 2, err
	}
	if *reminders == "" {
		for name, v := range demoFlags {
			if !set[name] {
				_ = fs.Set(name, v)
			}
		}
		if rep, err := demo(ctx, cfg, *groups, *failRate, out); err != nil || !rep.OK() {
			return 1, err
		}
		return 0, nil
	}
	if cfg.Reminders, err = loadReminders(*reminders); err != nil {
		return 2, err
	}
	cfg.Sender = newFakeWhatsApp(cfg.Clock, *failRate, [2]time.Duration{100 * time.Millisecond, 400 * time.Millisecond}, nil)
	if *url != "" {
		cfg.Sender = &httpSender{client: &http.Client{Timeout: 30 * time.Second}, base: *url, token: *token}
	}
	if *redisURL != "" {
		closeShared, err := openShared(ctx, &cfg, *redisURL, *redisPrefix, *lockTTL)
		if err != nil {
			return 1, err
		}
		defer closeShared()
	}
	results, err := run(ctx, cfg, out)
	if err != nil {
		return 1, err
	}
	return statusCode(results), nil
}

// statusCode is 0 if every reminder ended in success (or is paused: a later
// run resumes it), 3 if some are partial, 1 if any failed or the run was
// interrupted.
func statusCode(results []result) (code int) {
	for _, x := range results {
		switch x.Status {
		case statusFailed, statusInterrupted:
			code = max(code, 1)
		case statusPartial:
			code = max(code, 3)
		}
	}
	return code
}

// printResults writes one line per reminder: how far it got and why it
// stopped.
func printResults(w io.Writer, results []result) {
	for _, x := range results {
		t := x.Tally
		notes := []string{fmt.Sprintf("%d sent now, %d attempts, %d retries, media prepared %d", x.SentNow, x.Attempts, x.Retries, x.Media)}
		if x.Already {
			notes[0] = "nothing to do"
		}
		note := func(ok bool, s string) {
			if ok {
				notes = append(notes, s)
			}
		}
		note(x.Duplicates > 0, fmt.Sprintf("duplicates suppressed by the gateway: %d", x.Duplicates))
		note(t.Failed+t.Skipped > 0, fmt.Sprintf("%d failed, %d skipped", t.Failed, t.Skipped))
		note(x.Err != nil, fmt.Sprint("stopped: ", x.Err))
		note(x.Closed, "window "+x.Window+" closed")
		note(!x.NextOpen.IsZero(), "opens again "+x.NextOpen.Format("Mon 15:04 MST"))
		fmt.Fprintf(w, "  %-12s %-16s %12s delivered  %-11s  %s\n", x.Account, x.ID, fmt.Sprintf("%d of %d", t.Sent, t.Targets), x.Status, strings.Join(notes, "; "))
	}
}
