package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

type check struct {
	OK   bool
	Text string
}

// checkDemo checks the demo's runs against what the fake service saw after
// each (seens) and the final state file (p).
func checkDemo(cfg config, runs [][]result, seens []seen, p progress) []check {
	last := seens[len(seens)-1]
	var cs []check
	add := func(ok bool, format string, args ...any) {
		cs = append(cs, check{ok, fmt.Sprintf(format, args...)})
	}
	// each applies ok to every result of a run and lists their notes.
	each := func(run int, ok func(i int, x result) bool, note func(x result) string) (bool, string) {
		all, notes := true, []string(nil)
		for i, x := range runs[run] {
			all, notes = all && ok(i, x), append(notes, note(x))
		}
		return all, strings.Join(notes, ", ")
	}
	delivered := func(x result) string { return fmt.Sprintf("%s %d of %d", x.Account, x.Tally.Sent, x.Tally.Targets) }

	ok, notes := each(0, func(_ int, x result) bool {
		return x.Status == statusPaused && x.Closed && x.Tally.Sent > 0 && x.Tally.Sent < x.Tally.Targets
	}, delivered)
	add(ok, "the windows closed mid-run: paused with %s delivered", notes)

	ok, notes = each(1, func(i int, x result) bool {
		return x.Status == statusInterrupted && x.Tally.Sent > runs[0][i].Tally.Sent
	}, delivered)
	add(ok, "the interrupted run kept its progress: %s", notes)

	ok, notes = each(2, func(i int, x result) bool {
		rs := p.Reminders[i] // the run's results are in the state file's order
		// From what the service received: sent if every part arrived,
		// otherwise failed or skipped as the state file says.
		want := resolveStatus(rs.tallyBy(func(g groupState) int { return len(last.Delivered[rs.Reminder.Account+"/"+g.ID]) }), false)
		return x.Status == want && final(want) && rs.Status == want
	}, func(x result) string {
		return fmt.Sprintf("%s %s (%d of %d, %d failed, %d skipped)", x.Account, x.Status, x.Tally.Sent, x.Tally.Targets, x.Tally.Failed, x.Tally.Skipped)
	})
	add(ok, "started again, it finished; statuses follow the rules: %s", notes)

	inOrder, inWindow := true, true
	msgs, dups := 0, 0
	for n := range maps.Values(last.Dups) {
		dups += n
	}
	for _, rs := range p.Reminders {
		sched, err := rs.Reminder.schedule(nil)
		inWindow = inWindow && err == nil
		for _, g := range rs.Groups {
			d := last.Delivered[rs.Reminder.Account+"/"+g.ID]
			msgs += len(d)
			inOrder = inOrder && len(d) == g.Parts
			for k := range d {
				inOrder, inWindow = inOrder && d[k].Part == k, inWindow && sched.Contains(d[k].At)
			}
		}
	}
	add(inOrder, "every group received its parts in order, each once, as the state file says (%d messages; %d duplicates suppressed by the service)", msgs, dups)
	add(inWindow, "no message was delivered outside its window")

	// The bucket lets through at most burst + n messages in any span of n
	// token intervals. Sends are recorded just after their token, so up to
	// Parallel sends granted before a span may be recorded in it. Each run
	// starts with a full bucket, so runs are measured one by one.
	interval := time.Duration(float64(time.Minute) / cfg.Rate)
	const n = 100
	span := n * interval
	bound := cfg.Burst + n + 1 + cfg.Parallel
	ok = true
	var peaks []string
	for _, rs := range p.Reminders {
		peak, from := 0, 0
		for _, s := range seens {
			peak, from = max(peak, peakIn(s.Attempts[from:], rs.Reminder.Account, span)), len(s.Attempts)
		}
		ok = ok && peak <= bound
		peaks = append(peaks, fmt.Sprintf("%s %d (%.0f/s)", rs.Reminder.Account, peak, float64(peak)/span.Seconds()))
	}
	add(ok, "rate: peak sends in any %v: %s; limit %.0f/s, so at most %d (%d + burst %d + %d in flight)",
		span, strings.Join(peaks, ", "), cfg.Rate/60, bound, n+1, cfg.Burst, cfg.Parallel)
	return cs
}

// peakIn returns the most attempts of account within any span of length d.
func peakIn(attempts []attempt, account string, d time.Duration) int {
	var ts []time.Time
	for _, a := range attempts {
		if a.Account == account {
			ts = append(ts, a.At)
		}
	}
	slices.SortFunc(ts, time.Time.Compare)
	peak, lo := 0, 0
	for hi := range ts {
		for ts[hi].Sub(ts[lo]) > d {
			lo++
		}
		peak = max(peak, hi-lo+1)
	}
	return peak
}
