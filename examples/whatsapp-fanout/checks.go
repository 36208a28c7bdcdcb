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

// checkDemo checks the demo's three runs (paused, interrupted, resumed)
// against what the fake service saw after each run (seens) and the final
// state file (p).
func checkDemo(cfg config, runs []runReport, seens []seen, p progress) []check {
	last := seens[len(seens)-1]
	var cs []check
	add := func(ok bool, format string, args ...any) {
		cs = append(cs, check{ok, fmt.Sprintf(format, args...)})
	}

	ok, notes := true, []string(nil)
	for _, x := range runs[0].Results {
		ok = ok && x.Status == statusPaused && x.Closed && x.Tally.Sent > 0 && x.Tally.Sent < x.Tally.Targets
		notes = append(notes, fmt.Sprintf("%s %d of %d", x.Account, x.Tally.Sent, x.Tally.Targets))
	}
	add(ok, "the windows closed mid-run: paused with %s delivered", strings.Join(notes, ", "))

	ok, notes = true, nil
	for i, x := range runs[1].Results {
		ok = ok && x.Status == statusInterrupted && x.Tally.Sent > runs[0].Results[i].Tally.Sent
		notes = append(notes, fmt.Sprintf("%s %d of %d", x.Account, x.Tally.Sent, x.Tally.Targets))
	}
	add(ok, "the interrupted run kept its progress: %s", strings.Join(notes, ", "))

	ok, notes = true, nil
	for _, x := range runs[2].Results {
		rs := find(p, x.ID)
		want := resolveStatus(serviceTally(rs, last), false)
		ok = ok && x.Status == want && final(want) && rs.Status == want
		notes = append(notes, fmt.Sprintf("%s %s (%d of %d, %d failed, %d skipped)",
			x.Account, x.Status, x.Tally.Sent, x.Tally.Targets, x.Tally.Failed, x.Tally.Skipped))
	}
	add(ok, "started again, it finished; statuses follow the rules: %s", strings.Join(notes, ", "))

	ok = true
	msgs, dups := 0, 0
	for n := range maps.Values(last.Dups) {
		dups += n
	}
	for _, rs := range p.Reminders {
		for _, g := range rs.Groups {
			d := last.Delivered[rs.Reminder.Account+"/"+g.ID]
			msgs += len(d)
			ok = ok && len(d) == g.Parts
			for k := range d {
				ok = ok && d[k].Part == k
			}
		}
	}
	add(ok, "every group received its parts in order, each once, as the state file says (%d messages; %d duplicates suppressed by the service)", msgs, dups)

	ok = true
	for _, rs := range p.Reminders {
		sched, err := rs.Reminder.schedule(nil)
		ok = ok && err == nil
		for _, g := range rs.Groups {
			for _, d := range last.Delivered[rs.Reminder.Account+"/"+g.ID] {
				ok = ok && sched.Contains(d.At)
			}
		}
	}
	add(ok, "no message was delivered outside its window")

	// The bucket lets through at most burst + n messages in any span of n
	// token intervals. Sends are recorded just after their token, so up to
	// Parallel sends granted before a span may be recorded in it. Each run
	// starts with a full bucket, so runs are measured one by one.
	interval := time.Duration(float64(time.Minute) / cfg.Rate)
	const n = 100
	span := n * interval
	bound := cfg.Burst + n + 1 + cfg.Parallel
	ok, notes = true, nil
	for _, rs := range p.Reminders {
		peak, from := 0, 0
		for _, s := range seens {
			peak = max(peak, peakIn(s.Attempts[from:], rs.Reminder.Account, span))
			from = len(s.Attempts)
		}
		ok = ok && peak <= bound
		notes = append(notes, fmt.Sprintf("%s %d (%.0f/s)", rs.Reminder.Account, peak, float64(peak)/span.Seconds()))
	}
	add(ok, "rate: peak sends in any %v: %s; limit %.0f/s, so at most %d (%d + burst %d + %d in flight)",
		span, strings.Join(notes, ", "), cfg.Rate/60, bound, n+1, cfg.Burst, cfg.Parallel)

	ok, notes = true, nil
	for _, rs := range p.Reminders {
		a := rs.Reminder.Account
		var counts []string
		prevPrep, prevSent := 0, 0
		for _, s := range seens {
			prep, sent := s.Prepared[a]-prevPrep, s.MediaSent[a]-prevSent
			prevPrep, prevSent = s.Prepared[a], s.MediaSent[a]
			ok = ok && prep <= 1 && (sent == 0 || prep == 1)
			counts = append(counts, fmt.Sprintf("%d for %d", prep, sent))
		}
		notes = append(notes, fmt.Sprintf("%s %s", a, strings.Join(counts, ", ")))
	}
	add(ok, "media prepared once per run (preparations for media messages, per run): %s", strings.Join(notes, "; "))
	return cs
}

func find(p progress, id string) *reminderState {
	if i := slices.IndexFunc(p.Reminders, func(rs *reminderState) bool { return rs.Reminder.ID == id }); i >= 0 {
		return p.Reminders[i]
	}
	return &reminderState{}
}

// serviceTally counts a reminder's groups from what the service received:
// sent if every part arrived, otherwise failed or skipped as the state
// file says (the service does not know which), pending if neither.
func serviceTally(rs *reminderState, s seen) tally {
	t := tally{Targets: len(rs.Groups)}
	for _, g := range rs.Groups {
		n := len(s.Delivered[rs.Reminder.Account+"/"+g.ID])
		t.PartsSent += n
		switch {
		case n == len(rs.Reminder.Parts):
			t.Sent++
		case g.Status == groupFailed:
			t.Failed++
		case g.Status == groupSkipped:
			t.Skipped++
		default:
			t.Pending++
		}
	}
	return t
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
