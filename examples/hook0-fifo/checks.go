package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// check makes the demo's checks, from what the dispatcher's tracker and
// the fake receiver saw.
func (r *report) check() {
	r.checkOrder()
	r.checkNoLoss()
	r.checkDeadLetters()
	r.checkIsolation()
	r.checkPanics()
	r.checkStored()
	r.add(r.badSig == 0 && r.badReq == 0, "every delivery was signed and well-formed (%d bad signatures, %d bad requests)", r.badSig, r.badReq)
}

// checkOrder: the receiver saw every FIFO subscription's requests one at
// a time and in sequence order, exhausted messages skipped, and, with a
// Store, under fences that never went back.
func (r *report) checkOrder() {
	var bad []string
	n := 0
	for _, s := range r.snap.subs {
		if !s.sub.FIFO {
			continue
		}
		n++
		b := r.boxes[s.sub.Name]
		if v := cmp.Or(b.fifoViolation(), b.fenceViolation()); v != "" {
			bad = append(bad, s.sub.Name+": "+v)
		}
	}
	r.add(len(bad) == 0, "every FIFO subscription got one request at a time, in sequence order (%d of %d)%s", n-len(bad), n, list(bad))
}

// checkNoLoss: every message was accepted exactly once or dead-lettered.
func (r *report) checkNoLoss() {
	var bad []string
	total := 0
	for _, s := range r.snap.subs {
		total += s.published
		acc := r.boxes[s.sub.Name].accepted
		uniq := slices.Compact(slices.Sorted(slices.Values(acc)))
		switch {
		case s.delivered+s.dead != s.published:
			bad = append(bad, fmt.Sprintf("%s: %d published, %d delivered, %d dead", s.sub.Name, s.published, s.delivered, s.dead))
		case len(acc) != s.delivered || len(uniq) != len(acc):
			bad = append(bad, fmt.Sprintf("%s: %d delivered, receiver accepted %d (%d distinct)", s.sub.Name, s.delivered, len(acc), len(uniq)))
		}
	}
	r.add(len(bad) == 0, "every one of %d messages was delivered exactly once or dead-lettered%s", total, list(bad))
}

// checkDeadLetters: nothing was given up before the receiver saw all its
// attempts.
func (r *report) checkDeadLetters() {
	var bad []string
	for _, l := range r.snap.letters {
		sent := countOf(r.boxes[l.Sub].requests, l.Seq)
		if l.Attempts != r.retry.attempts() || sent != l.Attempts {
			bad = append(bad, fmt.Sprintf("%s #%d after %d attempts, %d requests received", l.Sub, l.Seq, l.Attempts, sent))
		}
	}
	r.add(len(bad) == 0, "every dead letter was sent all %d attempts (%d dead letters)%s", r.retry.attempts(), len(r.snap.letters), list(bad))
}

func countOf[T comparable](xs []T, x T) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
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
	meanwhile := 0
	for _, o := range r.snap.outcomes {
		if o.sub != worst.sub.Name && slices.ContainsFunc(worst.blockedSpans, func(sp span) bool {
			return !o.at.Before(sp.from) && !o.at.After(sp.to)
		}) {
			meanwhile++
		}
	}
	// Had the blocked subscription held the workers up, some message would
	// have waited about as long as it was blocked; half leaves room for a
	// busy machine.
	r.add(wait < worst.blocked/2 && meanwhile > 0,
		"%s was blocked for %v, yet the others completed %d messages meanwhile and none waited over %v for a worker",
		worst.sub.Name, round(worst.blocked), meanwhile, round(wait))
}

// checkStored: the Store kept, as dead letters, the very messages that
// OnDrop saw given up.
func (r *report) checkStored() {
	if r.stored == nil {
		return
	}
	var seen []msgID
	for _, l := range r.snap.letters {
		seen = append(seen, msgID{l.Sub, l.Seq})
	}
	byID := func(a, b msgID) int { return cmp.Or(strings.Compare(a.sub, b.sub), cmp.Compare(a.seq, b.seq)) }
	slices.SortFunc(seen, byID)
	kept := slices.SortedFunc(slices.Values(r.stored.ids), byID)
	r.add(r.stored.n == len(r.snap.letters) && slices.Equal(seen, kept),
		"the store kept the %d dead letters in its table (Runner.DeadLetters read back %d, %d messages)", len(r.snap.letters), r.stored.n, len(kept))
}

// checkPanics: a message whose handler panicked was tried again.
func (r *report) checkPanics() {
	if len(r.snap.panics) == 0 {
		return
	}
	var bad, ids []string
	for _, p := range r.snap.panics {
		ids = append(ids, fmt.Sprintf("%s #%d", p.sub, p.seq))
		if !slices.Contains(r.boxes[p.sub].requests, p.seq) {
			bad = append(bad, fmt.Sprintf("%s #%d never sent", p.sub, p.seq))
		}
	}
	r.add(len(bad) == 0, "%d handler panic(s) recovered and the message retried (%s)%s", len(r.snap.panics), strings.Join(ids, ", "), list(bad))
}
