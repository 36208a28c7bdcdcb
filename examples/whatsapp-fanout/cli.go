package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/benbjohnson/clock"
)

// config configures one run of the program.
type config struct {
	State     string           // state file
	Rate      float64          // messages per minute per account
	Burst     int              // messages an idle account may send at once
	Parallel  int              // groups in flight per account
	Jitter    [2]time.Duration // pause between two parts of a group, uniform in [min, max)
	Attempts  int              // tries per message
	Backoff   time.Duration    // pause before the first retry, doubling
	Clock     clock.Clock      // the time; clock.New() for real use
	Sender    sender           // the messaging service
	Reminders []reminder       // reminders to add to the progress, if new
	Seed      uint64           // of the jitter
	SaveEvery time.Duration    // least time between two writes of the progress

	// With -redis, the account locks and buckets and the progress that
	// every instance given the same Redis shares (openShared); State is
	// then unused. Nil: this process's own, and the state file.
	Locks    accountLocks
	Limits   accountLimits
	Progress backend
}

func (c config) validate() error {
	switch {
	case c.State == "" && c.Progress == nil:
		return errors.New("no state file")
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

Sends reminders to many groups per account, paced and inside each
reminder's delivery window, keeping its progress in a state file. Without
-reminders it plays a demo against an in-process fake service and checks
it. There are no subcommands.

Flags:
`

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
	reminders := fs.String("reminders", "", "JSON `file` of reminders to send; without it, run the demo")
	state := fs.String("state", "whatsapp-fanout.state.json", "state `file` (demo: a new one in a temporary directory)")
	url := fs.String("url", os.Getenv("FANOUT_URL"), "messaging gateway base `URL` (env FANOUT_URL); empty: the in-process fake")
	token := fs.String("token", os.Getenv("FANOUT_TOKEN"), "bearer `token` for the gateway (env FANOUT_TOKEN)")
	rate := fs.Float64("rate", 40, "messages per minute per account")
	burst := fs.Int("burst", 1, "messages an idle account may send at once")
	parallel := fs.Int("parallel", 3, "groups in flight per account")
	jitterMin := fs.Duration("jitter-min", 500*time.Millisecond, "least pause between two parts of a group")
	jitterMax := fs.Duration("jitter-max", 1500*time.Millisecond, "longest pause between two parts of a group")
	attempts := fs.Int("attempts", 3, "tries per message")
	backoff := fs.Duration("backoff", 2*time.Second, "pause before the first retry, doubling")
	zone := fs.String("zone", "UTC", "IANA time zone of reminders that name none")
	win := fs.String("window", "06:00-18:00", "delivery window of reminders that name none, e.g. \"Mon-Fri 09:00-17:30\"")
	follow := fs.Bool("follow", false, "when a window closes, wait for it to open again and resume")
	redisURL := fs.String("redis", "", "Redis `URL` (e.g. redis://127.0.0.1:6379/0) where several instances share the account locks and buckets and the progress, instead of -state")
	redisPrefix := fs.String("redis-prefix", "pacer", "start of the program's Redis keys; instances with the same -redis and -redis-prefix work together")
	lockTTL := fs.Duration("lock-ttl", 10*time.Second, "with -redis: lease of an account lock, renewed while held; a killed instance's lock lapses after it")
	failRate := fs.Float64("fail-rate", 0.02, "fake service: share of attempts that fail")
	groups := fs.Int("groups", 1000, "demo: groups per reminder")
	seed := fs.Uint64("seed", 1, "seed of jitter and fake failures")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		printUsage(out)
		return 0, nil
	} else if err != nil {
		printUsage(errOut) // after the flag package's line saying what is wrong
		return 2, nil
	}
	usageError := func(err error) (int, error) {
		printUsage(errOut)
		return 2, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case fs.NArg() > 0:
		return usageError(fmt.Errorf("unexpected arguments %q", fs.Args()))
	case *reminders == "" && *redisURL != "":
		return usageError(errors.New("-redis needs -reminders: the demo runs in one process"))
	case set["state"] && *redisURL != "":
		return usageError(errors.New("-state and -redis exclude each other: with -redis the progress is kept in Redis"))
	}

	if *reminders == "" {
		dc := defaultDemo()
		dc.Groups, dc.FailRate, dc.Seed = *groups, *failRate, *seed
		// Real-use defaults give way to the demo's, unless given.
		for name, apply := range map[string]func(){
			"state": func() { dc.State = *state }, "rate": func() { dc.Rate = *rate }, "burst": func() { dc.Burst = *burst },
			"parallel": func() { dc.Parallel = *parallel }, "attempts": func() { dc.Attempts = *attempts },
			"jitter-min": func() { dc.Jitter = [2]time.Duration{*jitterMin, *jitterMax} },
			"jitter-max": func() { dc.Jitter = [2]time.Duration{*jitterMin, *jitterMax} },
		} {
			if set[name] {
				apply()
			}
		}
		rep, err := demo(ctx, dc, out)
		if err != nil || !rep.OK() {
			return 1, err
		}
		return 0, nil
	}

	rs, err := loadReminders(*reminders, *zone, *win)
	if err != nil {
		return 2, err
	}
	clk := clock.New()
	cfg := config{
		State: *state, Rate: *rate, Burst: *burst, Parallel: *parallel,
		Jitter: [2]time.Duration{*jitterMin, *jitterMax}, Attempts: *attempts, Backoff: *backoff,
		Clock: clk, Reminders: rs, Seed: *seed,
		Sender: newFakeWhatsApp(clk, *failRate, [2]time.Duration{100 * time.Millisecond, 400 * time.Millisecond}, nil, *seed),
	}
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
	return runUntilDone(ctx, cfg, *follow, out)
}

// runReport is what one run of the program did.
type runReport struct {
	Start   time.Time
	Results []result
}

// runUntilDone runs once, or with follow again at each next window
// opening until no reminder is paused. The exit code is 0 if every reminder
// ended in success (or is paused, without follow), 3 if some are partial,
// and 1 if any failed or the run was interrupted.
func runUntilDone(ctx context.Context, cfg config, follow bool, out io.Writer) (int, error) {
	for {
		rep, err := run(ctx, cfg, out)
		if err != nil {
			return 1, err
		}
		cfg.Reminders = nil
		code := 0
		var next time.Time
		for _, x := range rep.Results {
			switch x.Status {
			case statusFailed, statusInterrupted:
				code = max(code, 1)
			case statusPartial:
				code = max(code, 3)
			case statusPaused:
				if next.IsZero() || x.NextOpen.Before(next) {
					next = x.NextOpen
				}
			}
		}
		if code == 1 || !follow || next.IsZero() {
			return code, nil
		}
		fmt.Fprintf(out, "waiting for the next window, %s\n", next.Format(time.RFC1123))
		if err := sleepCtx(ctx, cfg.Clock, cfg.Clock.Until(next)); err != nil {
			return 1, err
		}
	}
}
