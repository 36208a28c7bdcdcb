package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// demoConfig is the embedded demo: two accounts, one reminder each, run
// three times on a clock that starts shortly before the windows close.
type demoConfig struct {
	State     string // state file, which must not exist yet; empty means one in a temporary directory
	Groups    int    // per reminder
	Refuse    int    // groups of the second reminder that refuse the account for good
	Rate      float64
	Burst     int
	Parallel  int
	Attempts  int
	Backoff   time.Duration
	Jitter    [2]time.Duration
	Latency   [2]time.Duration // of the fake service
	FailRate  float64          // of the fake service, per attempt
	SaveEvery time.Duration
	Evening   time.Time     // the clock at the first run
	Morning   time.Time     // the clock at the second run
	Interrupt time.Duration // the second run is stopped after this long
	Seed      uint64
}

// defaultDemo returns the demo's settings. The windows close at 17:00 UTC
// on Monday 23 November 2026 (18:00 in Berlin, 17:00 in London), 1.5 s
// after the first run starts; the second run starts when they open again.
// The demo rate, 500 messages per second per account, stands for the real
// 40 per minute, so 2×1000 groups of two parts take seconds, not hours.
func defaultDemo() demoConfig {
	return demoConfig{
		Groups: 1000, Refuse: 3,
		Rate: 30000, Burst: 5, Parallel: 3, Attempts: 4, Backoff: 2 * time.Millisecond,
		Jitter: [2]time.Duration{time.Millisecond, 3 * time.Millisecond}, Latency: [2]time.Duration{200 * time.Microsecond, time.Millisecond},
		FailRate: 0.02, SaveEvery: 100 * time.Millisecond,
		Evening:   time.Date(2026, 11, 23, 16, 59, 58, 500e6, time.UTC),
		Morning:   time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC),
		Interrupt: 600 * time.Millisecond,
		Seed:      1,
	}
}

// demoReport is what the demo saw and the checks it made.
type demoReport struct {
	Runs   []runReport
	Checks []check
}

// OK reports whether every check held.
func (d demoReport) OK() bool {
	for _, c := range d.Checks {
		if !c.OK {
			return false
		}
	}
	return len(d.Checks) > 0
}

// demo plays the story: the evening run pauses when the windows close; the
// next morning a run is interrupted (as by Ctrl-C); started again, the
// program resumes from its state file and finishes. Then it checks what the
// fake service received against the rules.
func demo(ctx context.Context, dc demoConfig, out io.Writer) (demoReport, error) {
	state := dc.State
	if state == "" {
		tmp, err := os.MkdirTemp("", "whatsapp-fanout-")
		if err != nil {
			return demoReport{}, err
		}
		defer os.RemoveAll(tmp)
		state = filepath.Join(tmp, "fanout.state.json")
	} else if _, err := os.Stat(state); err == nil {
		return demoReport{}, fmt.Errorf("the demo starts afresh: state file %s exists", state)
	}
	reminders := demoReminders(dc.Groups)
	refuse := reminders[1].Groups[:dc.Refuse]
	clk := clockAt(dc.Evening)
	fake := newFakeWhatsApp(clk, dc.FailRate, dc.Latency, refuse, dc.Seed)
	cfg := config{
		State: state,
		Rate:  dc.Rate, Burst: dc.Burst, Parallel: dc.Parallel, Attempts: dc.Attempts, Backoff: dc.Backoff,
		Jitter: dc.Jitter, Clock: clk, Sender: fake, Reminders: reminders, Seed: dc.Seed, SaveEvery: dc.SaveEvery,
	}
	fmt.Fprintf(out, "whatsapp-fanout demo: %d accounts × %d groups × %d parts, %v msgs/min per account (burst %d), %d groups in parallel, fake failure rate %v\n",
		len(reminders), dc.Groups, len(reminders[0].Parts), dc.Rate, dc.Burst, dc.Parallel, dc.FailRate)

	var rep demoReport
	var seens []seen
	step := func(title string, ctx context.Context) error {
		fmt.Fprintf(out, "\n== %s\n", title)
		r, err := run(ctx, cfg, out)
		if err != nil {
			return err
		}
		rep.Runs = append(rep.Runs, r)
		seens = append(seens, fake.snapshot())
		return nil
	}
	if err := step("evening: the windows close 1.5 s into the run", ctx); err != nil {
		return rep, err
	}
	clk.Jump(dc.Morning)
	cfg.Reminders = nil // from now on, everything comes from the state file
	// Interrupt with a timer, not a deadline: a context deadline is wall
	// time, while the run's clock reads the next morning.
	ictx, cancel := context.WithCancel(ctx)
	timer := time.AfterFunc(dc.Interrupt, cancel)
	err := step(fmt.Sprintf("next morning: the run is interrupted after %v", dc.Interrupt), ictx)
	timer.Stop()
	cancel()
	if err != nil {
		return rep, err
	}
	if err := step("started again: resumes from the state file", ctx); err != nil {
		return rep, err
	}
	p, err := loadProgress(cfg.State)
	if err != nil {
		return rep, err
	}
	rep.Checks = checkDemo(cfg, rep.Runs, seens, p)
	fmt.Fprintln(out)
	for _, c := range rep.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(out, "%s %s\n", mark, c.Text)
	}
	if rep.OK() {
		fmt.Fprintln(out, "all checks held")
	} else {
		fmt.Fprintln(out, "some checks FAILED")
	}
	return rep, nil
}
