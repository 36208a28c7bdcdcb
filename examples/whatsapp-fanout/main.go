// Command whatsapp-fanout sends reminders to many groups per account,
// paced and inside each reminder's delivery window.
//
// Per account one fan-out runs at a time (mutex.Keyed), every message takes
// a token from the account's bucket (ratelimit.Keyed, 40 per minute by
// default), up to 3 groups are in flight while the parts of one group go
// out in order with a little jitter between them, and the run stops when
// the reminder's window (window.Schedule, in its IANA zone) closes. Progress
// is kept in a state file, so a paused or killed run resumes where it
// stopped; every part carries an idempotency key, so a gateway that honours
// it delivers each part once across restarts. With -redis, instances share
// the account locks (redismutex), the account buckets (redisrate) and the
// progress in Redis. Without -reminders it plays a demo against a fake
// service.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/benbjohnson/clock"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := start(ctx, os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "whatsapp-fanout:", err)
	}
	os.Exit(code)
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
	if fs.NArg() > 0 {
		printUsage(errOut)
		return 2, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	if *reminders == "" {
		if *redisURL != "" {
			printUsage(errOut)
			return 2, errors.New("-redis needs -reminders: the demo runs in one process")
		}
		dc := defaultDemo()
		dc.Groups, dc.FailRate, dc.Seed = *groups, *failRate, *seed
		// Real-use defaults give way to the demo's, unless given.
		if set["state"] {
			dc.State = *state
		}
		if set["rate"] {
			dc.Rate = *rate
		}
		if set["burst"] {
			dc.Burst = *burst
		}
		if set["parallel"] {
			dc.Parallel = *parallel
		}
		if set["jitter-min"] || set["jitter-max"] {
			dc.Jitter = [2]time.Duration{*jitterMin, *jitterMax}
		}
		if set["attempts"] {
			dc.Attempts = *attempts
		}
		rep, err := demo(ctx, dc, out)
		if err != nil {
			return 1, err
		}
		if !rep.OK() {
			return 1, nil
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
	}
	if *url != "" {
		cfg.Sender = &httpSender{client: &http.Client{Timeout: 30 * time.Second}, base: *url, token: *token}
	} else {
		cfg.Sender = newFakeWhatsApp(clk, *failRate, [2]time.Duration{100 * time.Millisecond, 400 * time.Millisecond}, nil, *seed)
	}
	if *redisURL != "" {
		if set["state"] {
			printUsage(errOut)
			return 2, errors.New("-state and -redis exclude each other: with -redis the progress is kept in Redis")
		}
		sh, closeShared, err := openShared(ctx, *redisURL, *redisPrefix, *lockTTL, *rate, *burst)
		if err != nil {
			return 1, err
		}
		defer closeShared()
		cfg.Shared = sh
	}
	return runUntilDone(ctx, cfg, *follow, out)
}
