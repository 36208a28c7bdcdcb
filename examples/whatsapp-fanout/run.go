package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/pacerkit/pacer/ratelimit"
)

// config configures one run of the program.
type config struct {
	State     string               // state file
	Rate      float64              // messages per minute per account
	Burst     int                  // messages an idle account may send at once
	Parallel  int                  // groups in flight per account
	Jitter    [2]time.Duration     // pause between two parts of a group, uniform in [min, max)
	Attempts  int                  // tries per message
	Backoff   time.Duration        // pause before the first retry, doubling
	Clock     clock.Clock          // the time; clock.New() for real use
	Sender    sender               // the messaging service
	Reminders []reminder           // reminders to add to the state file, if new
	Seed      uint64               // of the jitter
	SaveEvery time.Duration        // least time between two writes of the progress
	Log       func(string, ...any) // progress lines; nil: none

	// Shared, when set, holds the account locks and buckets and the
	// progress in Redis, shared by every instance given the same one
	// (-redis); State is then unused. Nil: this process's own locks and
	// buckets, and the state file.
	Shared *shared
}

func (c config) validate() error {
	switch {
	case c.State == "" && c.Shared == nil:
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

// runReport is what one run of the program did.
type runReport struct {
	Start   time.Time
	Results []result
}

// run is one run of the program: it loads the progress (the state file,
// or Redis), adds the reminders of cfg that are new, and sends every
// reminder that is not final yet (new, running or paused), the accounts in
// parallel. It returns when every fan-out has stopped: done, paused at its
// window's close, or interrupted by ctx. The progress is stored when run
// returns.
func run(ctx context.Context, cfg config, out io.Writer) (runReport, error) {
	if err := cfg.validate(); err != nil {
		return runReport{}, err
	}
	f := &fanout{cfg: cfg, media: newMediaCache(cfg.Sender), rnd: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed+1))}
	var be backend
	if cfg.Shared != nil {
		f.locks, f.limits, be = cfg.Shared.locks, cfg.Shared.limits, cfg.Shared.progress
	} else {
		// A fresh bucket per run: the process's own, as its lock.
		limits, err := ratelimit.NewKeyed[string](ratelimit.KeyedConfig{Rate: cfg.Rate / 60, Burst: cfg.Burst, Clock: cfg.Clock})
		if err != nil {
			return runReport{}, err
		}
		f.locks, f.limits = &localLocks{}, localLimits{limits}
		if be, err = openStateFile(ctx, cfg.State); err != nil {
			return runReport{}, err
		}
	}
	st, err := openStore(ctx, be, cfg.Reminders, cfg.Clock, cfg.SaveEvery)
	if err != nil {
		return runReport{}, err
	}
	f.store = st
	n := st.len()
	rep := runReport{Start: cfg.Clock.Now(), Results: make([]result, n)}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { rep.Results[i] = f.send(ctx, i) })
	}
	wg.Wait()
	rep.print(out)
	return rep, st.Close()
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
