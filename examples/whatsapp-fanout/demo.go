package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// demoConfig is the embedded demo: two accounts, one reminder each, run
// three times on a clock that starts shortly before the windows close.
type demoConfig struct {
	config                     // the limits; State must not exist yet, and empty means one in a temporary directory
	Groups    int              // per reminder
	Refuse    int              // groups of the second reminder that refuse the account for good
	Latency   [2]time.Duration // of the fake service
	FailRate  float64          // of the fake service, per attempt
	Evening   time.Time        // the clock at the first run
	Morning   time.Time        // the clock at the second run
	Interrupt time.Duration    // the second run is stopped after this long
}

// defaultDemo returns the demo's settings. The windows close at 17:00 UTC
// on Monday 23 November 2026 (18:00 in Berlin, 17:00 in London), 1.5 s
// after the first run starts; the second run starts when they open again.
// The demo rate, 500 messages per second per account, stands for the real
// 40 per minute, so 2×1000 groups of two parts take seconds, not hours.
func defaultDemo() demoConfig {
	return demoConfig{
		config: config{Rate: 30000, Burst: 5, Parallel: 3, Attempts: 4, Backoff: 2 * time.Millisecond,
			Jitter: [2]time.Duration{time.Millisecond, 3 * time.Millisecond}, SaveEvery: 100 * time.Millisecond, Seed: 1},
		Groups: 1000, Refuse: 3,
		Latency:   [2]time.Duration{200 * time.Microsecond, time.Millisecond},
		FailRate:  0.02,
		Evening:   time.Date(2026, 11, 23, 16, 59, 58, 500e6, time.UTC),
		Morning:   time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC),
		Interrupt: 600 * time.Millisecond,
	}
}

// demoReport is what the demo saw and the checks it made.
type demoReport struct {
	Runs   []runReport
	Checks []check
}

// OK reports whether every check held.
func (d demoReport) OK() bool {
	return len(d.Checks) > 0 && !slices.ContainsFunc(d.Checks, func(c check) bool { return !c.OK })
}

// demo plays the story: the evening run pauses when the windows close; the
// next morning a run is interrupted (as by Ctrl-C); started again, the
// program resumes from its state file and finishes. Then it checks what the
// fake service received against the rules.
func demo(ctx context.Context, dc demoConfig, out io.Writer) (demoReport, error) {
	cfg := dc.config
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
	cfg.Reminders = demoReminders(dc.Groups)
	clk := clockAt(dc.Evening)
	fake := newFakeWhatsApp(clk, dc.FailRate, dc.Latency, cfg.Reminders[1].Groups[:dc.Refuse], dc.Seed)
	cfg.Clock, cfg.Sender = clk, fake
	fmt.Fprintf(out, "whatsapp-fanout demo: %d accounts × %d groups × %d parts, %v msgs/min per account (burst %d), %d groups in parallel, fake failure rate %v\n",
		len(cfg.Reminders), dc.Groups, len(cfg.Reminders[0].Parts), cfg.Rate, cfg.Burst, cfg.Parallel, dc.FailRate)

	var rep demoReport
	var seens []seen
	step := func(ctx context.Context, title string) error {
		fmt.Fprintf(out, "\n== %s\n", title)
		r, err := run(ctx, cfg, out)
		rep.Runs, seens = append(rep.Runs, r), append(seens, fake.snapshot())
		cfg.Reminders = nil // from now on, everything comes from the state file
		return err
	}
	if err := step(ctx, "evening: the windows close 1.5 s into the run"); err != nil {
		return rep, err
	}
	clk.Jump(dc.Morning)
	// Interrupt with a timer, not a deadline: a context deadline is wall
	// time, while the run's clock reads the next morning.
	ictx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(dc.Interrupt, cancel)
	err := step(ictx, fmt.Sprintf("next morning: the run is interrupted after %v", dc.Interrupt))
	timer.Stop()
	cancel()
	if err != nil {
		return rep, err
	}
	if err := step(ctx, "started again: resumes from the state file"); err != nil {
		return rep, err
	}
	p, err := loadProgress(cfg.State)
	if err != nil {
		return rep, err
	}
	rep.Checks = checkDemo(cfg, rep.Runs, seens, p)
	fmt.Fprintln(out)
	for _, c := range rep.Checks {
		fmt.Fprintf(out, "%s %s\n", map[bool]string{true: "ok  ", false: "FAIL"}[c.OK], c.Text)
	}
	fmt.Fprintln(out, map[bool]string{true: "all checks held", false: "some checks FAILED"}[rep.OK()])
	return rep, nil
}

// demoReminders returns the demo's two reminders: one per account, each to
// n groups, with a text and a shared flyer. The windows are in different
// zones but close at the same instant (17:00 UTC in winter).
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
