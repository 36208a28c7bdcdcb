package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// config is the demo's configuration.
type config struct {
	Dir     string        // state directory; empty means a temporary one, removed afterwards
	Quiet   time.Duration // debounce quiet period
	MaxWait time.Duration // debounce max-wait
	Work    time.Duration // how long the fake remote takes per batch
	Listen  string        // address of the fake remote
	Token   string        // bearer token the fake remote expects
	Exe     string        // program to start event processes with (this one)
	Env     []string      // extra environment for event processes
	Plans   []plan        // the sessions and their events
	Timeout time.Duration // bound of the whole demo
}

// releaseLead is how long after the release the first event is due.
const releaseLead = 50 * time.Millisecond

// run plays the demo: it starts the fake remote, starts one event process
// per planned event, each recording its event at the planned time, waits
// for them all, starts a drain process per session to sweep up anything
// left, and reports what the run logs and the remote saw. It fails only if the demo itself could not run;
// whether the guarantees held is in the report.
func run(ctx context.Context, cfg config, out io.Writer) (report, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	dir := cfg.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hook-ingest-")
		if err != nil {
			return report{}, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return report{}, err
	}
	rem, err := startRemote(cfg.Listen, cfg.Token, cfg.Work, nil)
	if err != nil {
		return report{}, err
	}
	defer rem.Close()

	common := []string{
		"-dir", dir, "-quiet", cfg.Quiet.String(), "-max-wait", cfg.MaxWait.String(),
		"-url", rem.url, "-token", cfg.Token, "-timeout", cfg.Timeout.String(),
	}
	fmt.Fprintf(out, "hook-ingest demo: %d sessions, quiet %v, max-wait %v, remote %s\n",
		len(cfg.Plans), cfg.Quiet, cfg.MaxWait, rem.url)

	// Start every event process, wait until all are up, then release each
	// at its planned instant.
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // on an early return, stop the children before waiting
	type planned struct {
		c  *child
		at time.Duration
	}
	var events []planned
	for _, p := range cfg.Plans {
		for i, at := range p.At {
			args := []string{"demo-event", "-session", p.Session, "-event", strconv.Itoa(i + 1), "-start-gate"}
			if p.Crash {
				args = append(args, "-crash-once")
			}
			c, err := startChild(ctx, &wg, cfg.Exe, cfg.Env, p.Session, true, append(args, common...)...)
			if err != nil {
				return report{}, err
			}
			events = append(events, planned{c, at})
		}
	}
	for _, e := range events {
		if err := e.c.up(ctx); err != nil {
			return report{}, err
		}
	}
	start := time.Now().Add(releaseLead)
	for _, e := range events {
		if err := e.c.release(start.Add(e.at)); err != nil {
			return report{}, err
		}
	}
	var outcomes []outcome
	for _, e := range events {
		<-e.c.done
		outcomes = append(outcomes, e.c.outcome)
	}
	// Sweep up anything a dead process left with no one to process it.
	var drains []*child
	for _, p := range cfg.Plans {
		c, err := startChild(ctx, &wg, cfg.Exe, cfg.Env, p.Session, false, append([]string{"drain", "-session", p.Session}, common...)...)
		if err != nil {
			return report{}, err
		}
		drains = append(drains, c)
	}
	for _, c := range drains {
		<-c.done
		outcomes = append(outcomes, c.outcome)
	}
	if err := ctx.Err(); err != nil {
		return report{}, fmt.Errorf("demo did not finish within %v: %w", cfg.Timeout, err)
	}
	elapsed := time.Since(start)

	logs := map[string][]batchRun{}
	for _, p := range cfg.Plans {
		runs, err := readRuns(newSession(dir, p.Session).logPath())
		if err != nil {
			return report{}, err
		}
		logs[p.Session] = runs
	}
	r := buildReport(cfg, outcomes, logs, rem.record())
	r.EventProcs, r.Elapsed = len(events), elapsed
	r.print(out)
	return r, nil
}
