package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"
)

// The demo's story (README.md): two accounts, one reminder each, a clock
// 1.5 s before both windows close; the next morning, a run interrupted,
// then a run that resumes.
var (
	demoEvening   = time.Date(2026, 11, 23, 16, 59, 58, 500e6, time.UTC)
	demoMorning   = time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	demoInterrupt = 600 * time.Millisecond
	demoLatency   = [2]time.Duration{200 * time.Microsecond, time.Millisecond} // of the fake service
)

// demoRefuse is how many groups of the second reminder refuse the account.
const demoRefuse = 3

// demoReport is what the demo did, what the fake service saw after each
// run, and the checks it made.
type demoReport struct {
	Runs   [][]result
	Seen   []seen
	Checks []check
}

// OK reports whether every check held.
func (d demoReport) OK() bool {
	return len(d.Checks) > 0 && !slices.ContainsFunc(d.Checks, func(c check) bool { return !c.OK })
}

// demo plays the story with cfg's limits, groups per reminder and a fake
// service failing failRate of the attempts, then checks what the service
// received. cfg.State must not exist yet; empty is a temporary one.
func demo(ctx context.Context, cfg config, groups int, failRate float64, out io.Writer) (demoReport, error) {
	if cfg.State == "" {
		tmp, err := os.MkdirTemp("", "whatsapp-fanout-")
		if err != nil {
			return demoReport{}, err
		}
		defer os.RemoveAll(tmp)
		cfg.State = filepath.Join(tmp, "fanout.state.json")
	} else if _, err := os.Stat(cfg.State); err == nil {
		return demoReport{}, fmt.Errorf("the demo starts afresh: state file %s exists", cfg.State)
	}
	cfg.Reminders, cfg.SaveEvery = demoReminders(groups), 100*time.Millisecond
	clk := clockAt(demoEvening)
	fake := newFakeWhatsApp(clk, failRate, demoLatency, cfg.Reminders[1].Groups[:min(demoRefuse, groups)])
	cfg.Clock, cfg.Sender = clk, fake
	fmt.Fprintf(out, "whatsapp-fanout demo: %d accounts × %d groups × %d parts, %v msgs/min per account (burst %d), %d groups in parallel, fake failure rate %v\n",
		len(cfg.Reminders), groups, len(cfg.Reminders[0].Parts), cfg.Rate, cfg.Burst, cfg.Parallel, failRate)

	var rep demoReport
	step := func(ctx context.Context, title string) error {
		fmt.Fprintf(out, "\n== %s\n", title)
		r, err := run(ctx, cfg, out)
		rep.Runs, rep.Seen = append(rep.Runs, r), append(rep.Seen, fake.snapshot())
		cfg.Reminders = nil // from now on, everything comes from the state file
		return err
	}
	if err := step(ctx, "evening: the windows close 1.5 s into the run"); err != nil {
		return rep, err
	}
	clk.Jump(demoMorning)
	// Interrupt with a timer, not a deadline: a context deadline is wall
	// time, while the run's clock reads the next morning.
	ictx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(demoInterrupt, cancel)
	err := step(ictx, fmt.Sprintf("next morning: the run is interrupted after %v", demoInterrupt))
	timer.Stop()
	cancel()
	if err == nil {
		err = step(ctx, "started again: resumes from the state file")
	}
	if err != nil {
		return rep, err
	}
	p, err := loadProgress(cfg.State)
	if err != nil {
		return rep, err
	}
	rep.Checks = checkDemo(cfg, rep.Runs, rep.Seen, p)
	fmt.Fprintln(out)
	for _, c := range rep.Checks {
		fmt.Fprintf(out, "%s %s\n", map[bool]string{true: "ok  ", false: "FAIL"}[c.OK], c.Text)
	}
	fmt.Fprintln(out, map[bool]string{true: "all checks held", false: "some checks FAILED"}[rep.OK()])
	return rep, nil
}

// demoReminders returns one reminder per account to n groups, with a text
// and a flyer; the windows close at the same instant (17:00 UTC).
func demoReminders(n int) []reminder {
	groups := func(prefix string) []string {
		g := make([]string, n)
		for i := range g {
			g[i] = fmt.Sprintf("%s-group-%04d", prefix, i+1)
		}
		return g
	}
	parts := []part{
		{Text: "Reminder: the neighbourhood clean-up is on Saturday at 10:00."},
		{Media: "https://example.com/flyers/clean-up.jpg", Text: "The route"},
	}
	return []reminder{
		{ID: "berlin-cleanup", Account: "acct-berlin", Zone: "Europe/Berlin", Window: "06:00-18:00", Parts: parts, Groups: groups("ber")},
		{ID: "london-cleanup", Account: "acct-london", Zone: "Europe/London", Window: "05:00-17:00", Parts: parts, Groups: groups("lon")},
	}
}

// shiftedClock is the real clock moved to another instant, so that the demo
// begins seconds before a window closes and starts again the next morning
// without waiting through the night; timers run for real durations (in a
// testing/synctest bubble, the bubble's). Jump must not be called while
// timers of the clock run.
type shiftedClock struct {
	clock.Clock
	offset atomic.Int64 // nanoseconds
}

// clockAt returns a clock that reads at now and then runs at real speed.
func clockAt(at time.Time) *shiftedClock {
	c := &shiftedClock{Clock: clock.New()}
	c.Jump(at)
	return c
}

// Jump makes the clock read at now.
func (c *shiftedClock) Jump(at time.Time) { c.offset.Store(int64(time.Until(at))) }

func (c *shiftedClock) shift() time.Duration            { return time.Duration(c.offset.Load()) }
func (c *shiftedClock) Now() time.Time                  { return time.Now().Add(c.shift()) }
func (c *shiftedClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }
func (c *shiftedClock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

func (c *shiftedClock) WithDeadline(parent context.Context, d time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(parent, d.Add(-c.shift()))
}
