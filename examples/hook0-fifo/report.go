package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pacerkit/pacer"
)

// A report says what happened to every subscription and whether the
// guarantees held. Without a receiver (a real run) it has no checks.
type report struct {
	took    time.Duration
	retry   schedule
	snap    snapshot
	boxes   map[string]inbox // nil without a receiver
	badSig  int
	badReq  int
	checks  []check
	blocker string         // the FIFO subscription blocked longest
	stored  *storedLetters // nil without a Store
}

// storedLetters are the dead letters that the Runners' Store keeps, read
// back with Runner.DeadLetters: those of this run (the demo), or all of
// them (a real run, whose report says "in all").
type storedLetters struct {
	n    int
	ids  []msgID // the messages in them, up to maxHistory
	what string  // "of this run" or "in all"
}

type check struct {
	ok   bool
	text string
}

func newReport(d *dispatcher, rc *receiver, took time.Duration, stored *storedLetters) *report {
	r := &report{took: took, retry: d.cfg.Retry, snap: d.track.snapshot(), stored: stored}
	if rc != nil {
		r.boxes, r.badSig, r.badReq = rc.snapshot()
		r.check()
	}
	return r
}

func (r *report) add(ok bool, format string, args ...any) {
	r.checks = append(r.checks, check{ok, fmt.Sprintf(format, args...)})
}

func (r *report) ok() bool {
	return !slices.ContainsFunc(r.checks, func(c check) bool { return !c.ok })
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nper subscription (depth: most messages waiting; blocked: time a failing head held the queue; wait: longest a ready message waited to be sent):\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  subscription\tmode\ttypes\tmsgs\tdelivered\tdead\tretries\tdepth\tblocked\twait\tin flight\torder")
	for _, s := range r.snap.subs {
		blocked, order, inFlight := "-", "-", "-"
		if s.sub.FIFO {
			blocked = round(s.blocked).String()
		}
		if b, ok := r.boxes[s.sub.Name]; ok {
			inFlight = fmt.Sprint(b.maxInFlight)
			switch v := b.fifoViolation(); {
			case !s.sub.FIFO:
				order = fmt.Sprintf("any (%d overtaken)", b.reordered())
			case v != "":
				order = "BROKEN: " + v
			default:
				order = "in order"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%v\t%s\t%s\n", s.sub.Name, map[bool]string{true: "fifo", false: "concurrent"}[s.sub.FIFO], strings.Join(s.sub.Types, "|"),
			s.published, s.delivered, s.dead, s.retries, s.maxDepth, blocked, round(s.maxWait), inFlight, order)
	}
	tw.Flush()

	fmt.Fprintf(w, "\ndead letters (%d):\n", len(r.snap.letters))
	for i, l := range r.snap.letters {
		if i == maxLetters {
			fmt.Fprintf(w, "  ... and %d more\n", len(r.snap.letters)-i)
			break
		}
		why := l.Err
		if u := errors.Unwrap(why); u != nil {
			why = u // the last attempt's error, which pacer.Permanent wraps
		}
		if errors.Is(l.Err, pacer.ErrClosed) {
			why = errors.New("not delivered before shutdown")
		}
		fmt.Fprintf(w, "  %-9s #%-3d %s %-16s after %d attempts, at %v: %s\n", l.Sub, l.Seq, l.Event.ID, l.Event.Type, l.Attempts, round(l.At), why)
	}
	if r.stored != nil {
		fmt.Fprintf(w, "  the store keeps %d dead letters %s (Runner.DeadLetters)\n", r.stored.n, r.stored.what)
	}
	if len(r.checks) > 0 {
		fmt.Fprintf(w, "\nchecks:\n")
		for _, c := range r.checks {
			mark := "ok  "
			if !c.ok {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "  %s %s\n", mark, c.text)
		}
	}
	fmt.Fprintf(w, "\ntook %v\n", round(r.took))
}

// maxLetters is the most dead letters print lists.
const maxLetters = 20

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func list(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return ": " + strings.Join(items, "; ")
}
