package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report is what the demo observed, and the checks it makes of it.
type report struct {
	Sessions []sessionReport
	Failures []string      // events whose process failed
	Elapsed  time.Duration // from the first event to the last delivery
	Checks   []check
}

// sessionReport is one session's share of the report.
type sessionReport struct {
	Session     string
	Busy        bool           // from the plan
	Events      int            // events sent
	Runs        int            // batches the remote applied
	Reasons     map[string]int // of those batches
	Refused     int            // requests the remote did not apply: stale fence, or key applied already
	Lost, Dup   []string       // event ids never delivered, or delivered more than once
	Overlaps    int            // finished runs during which another run started (run log)
	Concurrent  int            // most requests of the session the remote processed at once
	Died        int            // runs whose process died before finishing (run log)
	LongestWait time.Duration  // first event of a batch to its processing (recovered batches aside)
}

type check struct {
	OK   bool
	Text string
}

// OK reports whether every check held.
func (r report) OK() bool {
	return !slices.ContainsFunc(r.Checks, func(c check) bool { return !c.OK })
}

// readLogs reads the run log of every planned session in dir.
func readLogs(dir string, plans []plan) (logs map[string][]batchRun, err error) {
	logs = map[string][]batchRun{}
	for _, p := range plans {
		if logs[p.Session], err = readRuns(newSession(dir, p.Session).logPath()); err != nil {
			return nil, err
		}
	}
	return logs, nil
}

// buildReport checks the demo's outcome against the guarantees: every
// event delivered exactly once, runs of one session never overlapping,
// fewer runs than events, a busy session processed at max-wait, and no
// process failing.
func buildReport(plans []plan, failures []string, logs map[string][]batchRun, rem *remote, elapsed time.Duration) report {
	rem.mu.Lock()
	defer rem.mu.Unlock()
	r := report{Failures: failures, Elapsed: elapsed}
	var events, runs, lost, dup, refused, overlaps int
	batched, busyOK := true, true
	for _, p := range plans {
		s := sessionReport{Session: p.Session, Busy: p.Busy, Events: len(p.At), Reasons: map[string]int{}}
		if seen := rem.sessions[p.Session]; seen != nil {
			s.Refused, s.Concurrent = seen.stale+seen.repeated, seen.maxActive
		}
		delivered := map[string]int{}
		for _, b := range rem.applied {
			if b.Session == p.Session {
				s.Runs++
				s.Reasons[b.Reason]++
				for _, e := range b.Events {
					delivered[e.ID]++
				}
			}
		}
		for i := range p.At {
			switch id := strconv.Itoa(i + 1); delivered[id] {
			case 0:
				s.Lost = append(s.Lost, id)
			case 1:
			default:
				s.Dup = append(s.Dup, id)
			}
		}
		for _, rn := range logs[p.Session] {
			switch {
			case !rn.finished():
				// A dead process's run stays open in the log forever;
				// only runs that ended prove they were running.
				s.Died++
				continue
			case rn.Overlapped:
				s.Overlaps++
			}
			if rn.Reason != reasonRecovered && len(rn.Events) > 0 {
				s.LongestWait = max(s.LongestWait, rn.Start.Sub(rn.Events[0].At))
			}
		}
		events, runs, refused = events+s.Events, runs+s.Runs, refused+s.Refused
		lost, dup = lost+len(s.Lost), dup+len(s.Dup)
		overlaps += s.Overlaps + max(s.Concurrent-1, 0)
		batched = batched && s.Runs < s.Events
		busyOK = busyOK && (!s.Busy || s.Reasons[reasonMaxWait] > 0)
		r.Sessions = append(r.Sessions, s)
	}
	r.Checks = []check{
		{lost == 0 && dup == 0, fmt.Sprintf("every event delivered exactly once (%d of %d; lost %d, twice %d; %d sent again and not applied)", events-lost, events, lost, dup, refused)},
		{overlaps == 0, "no session was ever processed by two processors at once"},
		{batched, fmt.Sprintf("events were batched: %d runs for %d events, fewer than events in every session", runs, events)},
		{busyOK, "a session that never went quiet was still processed at max-wait"},
		{len(failures) == 0, fmt.Sprintf("every event was processed without error (%d failed)", len(failures))},
	}
	return r
}

func (r report) print(w io.Writer) {
	row := func(cols ...any) {
		fmt.Fprintln(w, strings.TrimRight(fmt.Sprintf("%-11s %6v %5v %6v %9v %13v  %s", cols...), " "))
	}
	row("session", "events", "runs", "quiet", "max-wait", "longest wait", "")
	events := 0
	for _, s := range r.Sessions {
		events += s.Events
		var notes []string
		if s.Busy {
			notes = append(notes, "never quiet")
		}
		if n := s.Reasons[reasonRecovered]; n > 0 {
			notes = append(notes, fmt.Sprintf("%d recovered from a dead processor", n))
		}
		row(s.Session, s.Events, s.Runs, s.Reasons[reasonQuiet], s.Reasons[reasonMaxWait], s.LongestWait.Round(time.Millisecond), strings.Join(notes, "; "))
	}
	fmt.Fprintf(w, "%d events in %v\n", events, r.Elapsed.Round(10*time.Millisecond))
	for _, f := range r.Failures {
		fmt.Fprintf(w, "  failed: %s\n", f)
	}
	for _, c := range r.Checks {
		fmt.Fprintf(w, "%s %s\n", map[bool]string{true: "ok  ", false: "FAIL"}[c.OK], c.Text)
	}
	if r.OK() {
		fmt.Fprintln(w, "all checks held")
	} else {
		fmt.Fprintln(w, "some checks FAILED")
	}
}
