package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// report is what the demo observed, and the checks it makes of it.
type report struct {
	Quiet, MaxWait time.Duration
	EventProcs     int           // event processes started
	Elapsed        time.Duration // from the first event to the end of the drain
	Sessions       []sessionReport
	Failures       []string // processes that failed, other than the planned crash
	Checks         []check
}

// sessionReport is one session's share of the report.
type sessionReport struct {
	Session     string
	Busy, Crash bool // from the plan
	Events      int  // events sent
	Runs        int  // batches the remote applied
	Refused     int  // requests the remote refused: stale fence, or key applied already
	Reasons     map[string]int
	Lost, Dup   []string      // event ids never delivered, or delivered more than once
	Overlaps    int           // finished runs during which another run started (run log)
	Concurrent  int           // most batches of the session the remote processed at once
	LongestWait time.Duration // first event of a batch to its processing (crash recovery aside)
	Killed      int           // event processes killed by SIGKILL
	Died        int           // runs whose process died before finishing
	Recovered   bool          // every died run's events were delivered by a later run
}

type check struct {
	OK   bool
	Text string
}

// OK reports whether every check held.
func (r report) OK() bool {
	return !slices.ContainsFunc(r.Checks, func(c check) bool { return !c.OK })
}

// buildReport checks the demo's outcome against the guarantees: every
// event delivered exactly once, runs of one session never overlapping,
// fewer runs than events, a busy session processed at max-wait, and a dead
// processor's batch delivered by the next one.
func buildReport(cfg config, outcomes []outcome, logs map[string][]batchRun, rem remoteRecord) report {
	r := report{Quiet: cfg.Quiet, MaxWait: cfg.MaxWait}
	for _, p := range cfg.Plans {
		s := sessionReport{Session: p.Session, Busy: p.Busy, Crash: p.Crash, Events: len(p.At),
			Reasons: map[string]int{}, Concurrent: rem.Concurrent[p.Session],
			Refused: rem.Stale[p.Session] + rem.Repeated[p.Session]}
		delivered := map[string]int{}
		for _, b := range rem.Applied {
			if b.Session != p.Session {
				continue
			}
			s.Runs++
			s.Reasons[b.Reason]++
			for _, e := range b.Events {
				delivered[e.ID]++
			}
		}
		for i := range p.At {
			id := fmt.Sprint(i + 1)
			switch n := delivered[id]; {
			case n == 0:
				s.Lost = append(s.Lost, id)
			case n > 1:
				s.Dup = append(s.Dup, id)
			}
		}
		s.analyseRuns(logs[p.Session])
		for _, o := range outcomes {
			if o.Session == p.Session && o.Killed {
				s.Killed++
			}
		}
		r.Sessions = append(r.Sessions, s)
	}
	for _, o := range outcomes {
		if o.Err != nil && !(o.Killed && planOf(cfg.Plans, o.Session).Crash) {
			r.Failures = append(r.Failures, fmt.Sprintf("%s: %v %s", strings.Join(o.Args[:3], " "), o.Err, o.Output))
		}
	}
	r.Checks = r.check()
	return r
}

// analyseRuns reads the run log: overlaps, waits, and what became of runs
// whose process died.
func (s *sessionReport) analyseRuns(runs []batchRun) {
	s.Recovered = true
	for i, rn := range runs {
		if !rn.finished() {
			// A run of a dead process stays open in the log forever;
			// only runs that ended prove they were running.
			s.Died++
			s.Recovered = s.Recovered && deliveredLater(rn, runs[i+1:])
			continue
		}
		if rn.Overlapped {
			s.Overlaps++
		}
		if rn.Reason != reasonRecovered && len(rn.Events) > 0 {
			s.LongestWait = max(s.LongestWait, rn.Start.Sub(rn.Events[0].At))
		}
	}
}

// deliveredLater reports whether each event of the dead run was in a later
// run that finished without error.
func deliveredLater(dead batchRun, later []batchRun) bool {
	for _, e := range dead.Events {
		if !slices.ContainsFunc(later, func(r batchRun) bool {
			return r.finished() && r.Err == "" && slices.ContainsFunc(r.Events, func(x event) bool { return x.ID == e.ID })
		}) {
			return false
		}
	}
	return true
}

func planOf(plans []plan, session string) plan {
	for _, p := range plans {
		if p.Session == session {
			return p
		}
	}
	return plan{}
}

func (r report) check() []check {
	var events, runs, lost, dup, refused, overlaps, busy, busyOK, crash, crashOK int
	batched := true
	for _, s := range r.Sessions {
		events += s.Events
		runs += s.Runs
		lost += len(s.Lost)
		dup += len(s.Dup)
		refused += s.Refused
		overlaps += s.Overlaps + max(s.Concurrent-1, 0)
		batched = batched && s.Runs < s.Events
		if s.Busy {
			busy++
			if s.Reasons[reasonMaxWait] > 0 {
				busyOK++
			}
		}
		if s.Crash {
			crash++
			if s.Killed == 1 && s.Died == 1 && s.Recovered {
				crashOK++
			}
		}
	}
	cs := []check{
		{lost == 0 && dup == 0, fmt.Sprintf("every event delivered exactly once (%d of %d; lost %d, twice %d; %d sent again and not applied)", events-lost, events, lost, dup, refused)},
		{overlaps == 0, "no session was ever processed by two processes at once"},
		{batched, fmt.Sprintf("events were batched: %d runs for %d events, fewer than events in every session", runs, events)},
	}
	if busy > 0 {
		cs = append(cs, check{busyOK == busy, "a session that never went quiet was still processed at max-wait"})
	}
	if crash > 0 {
		cs = append(cs, check{crashOK == crash, "a processor killed mid-batch left no lock behind: the next process delivered its batch"})
	}
	cs = append(cs, check{len(r.Failures) == 0, fmt.Sprintf("every other process exited cleanly (%d failed)", len(r.Failures))})
	return cs
}

func (r report) print(w io.Writer) {
	row := func(cols ...any) {
		line := fmt.Sprintf("%-11s %6v %5v %6v %9v %10v %13v  %s", cols...)
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	row("session", "events", "runs", "quiet", "max-wait", "recovered", "longest wait", "")
	for _, s := range r.Sessions {
		var wait any = "-"
		if s.LongestWait > 0 {
			wait = s.LongestWait.Round(time.Millisecond)
		}
		row(s.Session, s.Events, s.Runs,
			s.Reasons[reasonQuiet], s.Reasons[reasonMaxWait], s.Reasons[reasonRecovered], wait, s.note())
	}
	fmt.Fprintf(w, "%d event processes in %v\n", r.EventProcs, r.Elapsed.Round(10*time.Millisecond))
	for _, f := range r.Failures {
		fmt.Fprintf(w, "  failed: %s\n", f)
	}
	for _, c := range r.Checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "%s %s\n", mark, c.Text)
	}
	if r.OK() {
		fmt.Fprintln(w, "all checks held")
	} else {
		fmt.Fprintln(w, "some checks FAILED")
	}
}

func (s sessionReport) note() string {
	var notes []string
	if s.Busy {
		notes = append(notes, "never quiet")
	}
	if s.Killed > 0 {
		notes = append(notes, fmt.Sprintf("%d processor killed mid-batch", s.Killed))
	}
	if len(s.Lost) > 0 {
		notes = append(notes, "lost "+strings.Join(s.Lost, ","))
	}
	if len(s.Dup) > 0 {
		notes = append(notes, "twice "+strings.Join(s.Dup, ","))
	}
	return strings.Join(notes, "; ")
}
