package main

import (
	"cmp"
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
	blocker string // the FIFO subscription blocked longest
	stored  int    // dead letters the Store keeps (Runner.DeadLetters); -1 without a Store
}

type check struct {
	ok   bool
	text string
}

func newReport(d *dispatcher, rc *receiver, took time.Duration, stored int) *report {
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
		mode, blocked, order, inFlight := "concurrent", "-", "-", "-"
		if s.sub.FIFO {
			mode, blocked = "fifo", round(s.blocked).String()
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
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%v\t%s\t%s\n", s.sub.Name, mode, strings.Join(s.sub.Types, "|"),
			s.published, s.delivered, s.dead, s.retries, s.maxDepth, blocked, round(s.maxWait), inFlight, order)
	}
	tw.Flush()

	fmt.Fprintf(w, "\ndead letters (%d):\n", len(r.snap.letters))
	for i, l := range r.snap.letters {
		if i == 20 {
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
		fmt.Fprintf(w, "  %-9s #%-3d %s %-16s after %d attempts: %s\n", l.Sub, l.Seq, l.Event.ID, l.Event.Type, l.Attempts, why)
	}
	if r.stored >= 0 {
		fmt.Fprintf(w, "  the store keeps %d dead letters in all (Runner.DeadLetters)\n", r.stored)
	}
	if len(r.checks) > 0 {
		fmt.Fprintf(w, "\nchecks:\n")
		for _, c := range r.checks {
			fmt.Fprintf(w, "  %s %s\n", map[bool]string{true: "ok  ", false: "FAIL"}[c.ok], c.text)
		}
	}
	fmt.Fprintf(w, "\ntook %v\n", round(r.took))
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// check makes the demo's checks, from what the dispatcher's tracker and
// the fake receiver saw.
func (r *report) check() {
	// The receiver saw every FIFO subscription's requests one at a time
	// and in sequence order, exhausted messages skipped, and, with a
	// Store, under fences that never went back.
	var bad []string
	n := 0
	for _, s := range r.snap.subs {
		if b := r.boxes[s.sub.Name]; s.sub.FIFO {
			n++
			if v := cmp.Or(b.fifoViolation(), b.fenceViolation()); v != "" {
				bad = append(bad, s.sub.Name+": "+v)
			}
		}
	}
	r.add(len(bad) == 0, "every FIFO subscription got one request at a time, in sequence order (%d of %d)%s", n-len(bad), n, list(bad))

	// Every message was accepted exactly once or dead-lettered.
	bad, n = nil, 0
	for _, s := range r.snap.subs {
		n += s.published
		acc := r.boxes[s.sub.Name].accepted
		uniq := slices.Compact(slices.Sorted(slices.Values(acc)))
		switch {
		case s.delivered+s.dead != s.published:
			bad = append(bad, fmt.Sprintf("%s: %d published, %d delivered, %d dead", s.sub.Name, s.published, s.delivered, s.dead))
		case len(acc) != s.delivered || len(uniq) != len(acc):
			bad = append(bad, fmt.Sprintf("%s: %d delivered, receiver accepted %d (%d distinct)", s.sub.Name, s.delivered, len(acc), len(uniq)))
		}
	}
	r.add(len(bad) == 0, "every one of %d messages was delivered exactly once or dead-lettered%s", n, list(bad))

	// Nothing was given up before the receiver saw all its attempts.
	bad = nil
	for _, l := range r.snap.letters {
		if sent := countOf(r.boxes[l.Sub].requests, l.Seq); l.Attempts != r.retry.attempts() || sent != l.Attempts {
			bad = append(bad, fmt.Sprintf("%s #%d after %d attempts, %d requests received", l.Sub, l.Seq, l.Attempts, sent))
		}
	}
	r.add(len(bad) == 0, "every dead letter was sent all %d attempts (%d dead letters)%s", r.retry.attempts(), len(r.snap.letters), list(bad))

	r.checkIsolation()

	r.add(r.badSig == 0 && r.badReq == 0, "every delivery was signed and well-formed (%d bad signatures, %d bad requests)", r.badSig, r.badReq)
}

// checkIsolation: while the most blocked FIFO subscription was stuck on a
// failing message, the others kept being delivered without waiting for it.
func (r *report) checkIsolation() {
	var worst *subStats
	for i, s := range r.snap.subs {
		if s.sub.FIFO && (worst == nil || s.blocked > worst.blocked) {
			worst = &r.snap.subs[i]
		}
	}
	if worst == nil || worst.blocked == 0 {
		r.add(true, "no FIFO subscription was blocked, so none could hold up the others")
		return
	}
	r.blocker = worst.sub.Name
	var wait time.Duration
	for _, s := range r.snap.subs {
		if s.sub.Name != worst.sub.Name {
			wait = max(wait, s.maxWait)
		}
	}
	// Had the blocked subscription held the workers up, some message would
	// have waited about as long as it was blocked; half leaves room for a
	// busy machine.
	r.add(wait < worst.blocked/2 && worst.meanwhile > 0,
		"%s was blocked for %v, yet the others completed %d messages meanwhile and none waited over %v for a worker",
		worst.sub.Name, round(worst.blocked), worst.meanwhile, round(wait))
}

func countOf[T comparable](xs []T, x T) (n int) {
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

func list(items []string) string {
	if len(items) == 0 {
		return ""
	}
	return ": " + strings.Join(items, "; ")
}
