package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
)

// appConfig is what the program needs to run, from the command line.
type appConfig struct {
	Listen   string        // webhook address
	APIURL   string        // base URL of the task API; empty runs the demo
	Token    string        // task API bearer token, optional
	Secret   []byte        // webhook HMAC secret, optional
	Rate     float64       // task API requests per second, all users together
	Burst    int           // task API burst
	Debounce time.Duration // quiet time per user before a run
	MaxWait  time.Duration // longest a user waits while edits keep coming
	Adaptive time.Duration // when > Debounce, the debounce may grow up to it under backlog or 429s
	Workers  int           // runs at once (different users)
	FakeAPI  string        // only serve the demo's fake task API on this address
	Logger   *slog.Logger

	// With -redis, what every instance shares: the users' debounce and
	// queue (Store), and the API's bucket with its pause (Limiter).
	RedisURL, RedisPrefix string
	LeaseTTL              time.Duration // how long a dead instance keeps its user; 0 is the Runner's default
	Store                 store.Store   // nil keeps the Runner's state in the process
	Limiter               apiLimiter    // nil makes a bucket in the process of Rate and Burst

	// Set by the demo and the tests.
	Today    func() time.Time  // the day plans start; nil: time.Now
	Base     http.RoundTripper // transport under the pacing; http.DefaultTransport when nil
	Observer *observer         // counts the Runner's events and handler calls; nil outside the demo
}

// An apiLimiter paces every request to the task API and is paused, for every
// request, by a 429's Retry-After.
type apiLimiter interface {
	ratelimit.Limiter
	ratelimit.Pauser
}

// A usageError is a command line the program cannot run: main exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// parseFlags reads the command line (without the program's name). It
// returns flag.ErrHelp after -h, and a usageError for a command line it
// cannot run, having printed why to stderr.
func parseFlags(args []string, stderr io.Writer) (appConfig, error) {
	fs := flag.NewFlagSet("notion-nextup", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		c       appConfig
		secret  string
		verbose bool
	)
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:8080", "webhook listen address (the demo picks a free loopback port unless set)")
	fs.StringVar(&c.APIURL, "api-url", os.Getenv("NEXTUP_API_URL"), "task API base URL; empty runs the embedded demo ($NEXTUP_API_URL)")
	fs.StringVar(&c.Token, "api-token", os.Getenv("NEXTUP_API_TOKEN"), "task API bearer token ($NEXTUP_API_TOKEN)")
	fs.StringVar(&secret, "secret", os.Getenv("NEXTUP_WEBHOOK_SECRET"), "webhook HMAC-SHA256 secret; empty skips the check ($NEXTUP_WEBHOOK_SECRET)")
	fs.Float64Var(&c.Rate, "rate", 3, "task API requests per second, all users (and, with -redis, all instances) together")
	fs.IntVar(&c.Burst, "burst", 3, "task API burst")
	fs.DurationVar(&c.Debounce, "debounce", 5*time.Second, "quiet time per user before a run (demo: 400ms unless set)")
	fs.DurationVar(&c.MaxWait, "max-wait", 15*time.Second, "longest a user waits while edits keep coming (demo: 1.5s unless set)")
	fs.DurationVar(&c.Adaptive, "adaptive", 0, "if > -debounce, let the debounce grow up to this under backlog or 429s")
	fs.IntVar(&c.Workers, "workers", 1, "users processed at once (per instance)")
	fs.StringVar(&c.RedisURL, "redis", "", "keep the debounce, the queue, the rate limit and its pause in Redis at this URL (redis://host:6379/0), shared by every instance with the same URL and -redis-prefix; empty keeps them in the process")
	fs.StringVar(&c.RedisPrefix, "redis-prefix", "nextup", "with -redis: the prefix of every Redis key; instances with the same prefix share their users' queue and the API's limit")
	fs.DurationVar(&c.LeaseTTL, "lease", 30*time.Second, "with -redis: how long an instance that died keeps its user from the others (renewed every third of it during a run)")
	fs.StringVar(&c.FakeAPI, "fake-api", "", "only serve the demo's fake task API on this address, to try real mode locally")
	fs.BoolVar(&verbose, "v", false, "log more: every run in the demo, every event for real")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, usageError{err.Error()}
	}
	demo := c.APIURL == "" && c.FakeAPI == ""
	switch {
	case fs.NArg() > 0:
		return c, usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	case demo && c.RedisURL != "":
		return c, usageError{"-redis needs -api-url; the demo of several instances on Redis is a test: go test -v -run TestThreeInstances ./examples/notion-nextup"}
	}
	c.Secret = []byte(secret)
	// Real runs log every run (-v: every event); the demo logs errors
	// only (-v: every run) so its report stays readable.
	level := slog.LevelInfo
	switch {
	case demo && !verbose:
		level = slog.LevelError
	case !demo && verbose:
		level = slog.LevelDebug
	}
	c.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if demo { // the demo's own defaults, for the flags not given
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, v := range map[string]string{"debounce": "400ms", "max-wait": "1.5s", "listen": "127.0.0.1:0"} {
			if !set[name] {
				_ = fs.Set(name, v)
			}
		}
	}
	return c, nil
}
