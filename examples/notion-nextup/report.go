package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
)

// An observer counts what the demo's report needs from the Runner: its
// events (OnEvent), and its handler calls, overlaps included, which the
// Runner promises never happen. It is safe for concurrent use.
type observer struct {
	started func(user string) // if set, called as a run of user begins

	mu       sync.Mutex
	running  map[string]bool
	overlaps int            // runs that began while the same user was running
	calls    map[string]int // handler calls per user
	retries  map[string]int
	dropped  map[string]error
	bursts   map[string][]burst // debounced bursts queued, per user
}

// A burst is one debounced group of a user's events entering the queue.
type burst struct {
	at     time.Time     // when it was queued
	waited time.Duration // from its first event to being queued
}

func newObserver() *observer {
	return &observer{running: map[string]bool{}, calls: map[string]int{}, retries: map[string]int{}, dropped: map[string]error{}, bursts: map[string][]burst{}}
}

func (o *observer) onEvent(e pacer.Event[string]) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch e.Kind {
	case pacer.EventRetry:
		o.retries[e.Key]++
	case pacer.EventDropped:
		o.dropped[e.Key] = e.Err
	case pacer.EventReady:
		o.bursts[e.Key] = append(o.bursts[e.Key], burst{at: e.Time, waited: e.Delay})
	}
}

// wrap returns h, counting each call and each overlap of two calls for one user.
func (o *observer) wrap(h pacer.Handler[string, Event]) pacer.Handler[string, Event] {
	return func(ctx context.Context, user string, events []Event) error {
		o.mu.Lock()
		if o.running[user] {
			o.overlaps++
		}
		o.running[user] = true
		o.calls[user]++
		o.mu.Unlock()
		defer func() {
			o.mu.Lock()
			delete(o.running, user)
			o.mu.Unlock()
		}()
		if o.started != nil {
			o.started(user)
		}
		return h(ctx, user, events)
	}
}

// A report is what the demo saw and the checks it made.
type report struct {
	took         time.Duration
	statuses     map[int]int    // webhook answers by HTTP status
	wrongAnswers []string       // malformed requests that got an unexpected status
	events       map[string]int // events queued per user
	runs         map[string]int // handler calls per user
	written      map[string]int // tasks written per user
	retries      map[string]int
	dropped      map[string]error
	bursts       map[string][]burst
	stream       time.Duration // how long dave's edits went on
	maxWait      time.Duration
	limit        string            // the fake API's
	nextUp       map[string]string // first task and its projected date, per user
	api          apiStats
	checks       checks
}

type check struct {
	name string
	ok   bool
}

// checks are a demo's verdicts, in the order they are printed.
type checks []check

// ok reports whether every check held.
func (cs checks) ok() bool { return !slices.ContainsFunc(cs, func(c check) bool { return !c.ok }) }

// write prints the checks to w, one a line, marked ok or FAIL.
func (cs checks) write(w io.Writer) {
	fmt.Fprintln(w, "checks:")
	for _, c := range cs {
		fmt.Fprintf(w, "  %s %s\n", map[bool]string{true: "ok  ", false: "FAIL"}[c.ok], c.name)
	}
}

// fill gathers the counters of a finished demo and runs the checks.
func (r *report) fill(d *demo, took time.Duration) {
	r.took = took
	d.obs.mu.Lock()
	r.runs, r.retries, r.dropped, r.bursts = d.obs.calls, d.obs.retries, d.obs.dropped, d.obs.bursts
	overlaps := d.obs.overlaps
	d.obs.mu.Unlock()
	d.mu.Lock()
	r.stream, r.maxWait = d.streamFor, d.maxWait
	servedWhileBusy := len(r.bursts["dave"]) > 0 && r.bursts["dave"][0].at.Before(d.streamEnd)
	d.mu.Unlock()
	r.api, r.written = d.fake.snapshot(), d.fake.written()
	r.limit = fmt.Sprintf("%g req/s, burst %d", d.fake.rate, d.fake.burst)
	maxPeak := d.fake.burst + int(math.Ceil(d.fake.rate))

	today, _ := time.Parse(dateLayout, demoToday)
	correct, coalesced := true, true
	r.nextUp = make(map[string]string)
	for _, u := range demoUsers {
		tasks := d.fake.userTasks(u)
		correct = correct && len(changed(tasks, plan(tasks, today))) == 0
		coalesced = coalesced && r.runs[u] > 0 && r.runs[u] < r.events[u]
		for _, t := range tasks {
			if t.Rank == 1 {
				r.nextUp[u] = fmt.Sprintf("%s %q, done %s", t.ID, t.Title, t.Projected)
			}
		}
	}
	r.checks = checks{
		{"no user processed twice at once", overlaps == 0},
		{"every user's ranks and projected dates match their final tasks", correct},
		{"events coalesced: fewer runs than events for every user", coalesced},
		{"bob edited during his run and was run again", r.runs["bob"] >= 2},
		{"dave, never quiet, was queued by max-wait while still editing", servedWhileBusy},
		{"unknown user dropped at its 404, not retried", r.droppedAtFirst404("mallory")},
		{"carol's failed query retried and then served", r.retries["carol"] >= 1 && r.written["carol"] > 0},
		{"webhook answered 401 (bad signature), 400 (bad JSON), 413 (over 1 MiB)", len(r.wrongAnswers) == 0 && r.statuses[401] == 1 && r.statuses[400] == 1 && r.statuses[413] == 1},
		{"no 429 after warm-up", r.api.ThrottledWarm == 0},
		{fmt.Sprintf("peak rate within burst + 1 s of refill (<= %d in 1 s)", maxPeak), r.api.Peak <= maxPeak},
	}
}

// droppedAtFirst404 reports whether user's events were dropped and the API
// answered user's query 404 only once: the permanent error ended the user's
// run without a retry. A run retried before the 404 (after a 429, say)
// still passes: only what follows the 404 counts.
func (r *report) droppedAtFirst404(user string) bool {
	return r.dropped[user] != nil && r.api.NotFound[user] == 1
}

func (r *report) print(w io.Writer) {
	queued, runs := 0, 0
	users := append(slices.Clone(demoUsers), demoStrangers...)
	for _, u := range users {
		queued, runs = queued+r.events[u], runs+r.runs[u]
	}
	st := r.statuses
	fmt.Fprintf(w, "webhooks: %d events queued, %d skipped (no assignee), %d rejected (%d bad signature, %d bad JSON, %d too large)\n",
		queued, st[202]-queued, st[401]+st[400]+st[413], st[401], st[400], st[413])
	fmt.Fprintf(w, "per user: %d events -> %d runs (events -> debounced bursts -> handler calls)\n", queued, runs)
	for _, u := range users {
		fmt.Fprintf(w, "  %-8s %2d -> %d -> %d, %d tasks written", u, r.events[u], len(r.bursts[u]), r.runs[u], r.written[u])
		if n := r.retries[u]; n > 0 {
			fmt.Fprintf(w, ", %d retried", n)
		}
		if u == "dave" && len(r.bursts[u]) > 0 {
			fmt.Fprintf(w, "; never quiet for %v, first burst after %v (max-wait %v)",
				r.stream.Round(10*time.Millisecond), r.bursts[u][0].waited.Round(10*time.Millisecond), r.maxWait)
		}
		if err := r.dropped[u]; err != nil {
			fmt.Fprintf(w, ", dropped: %v", err)
		}
		if s := r.nextUp[u]; s != "" {
			fmt.Fprintf(w, "; next up %s", s)
		}
		fmt.Fprintln(w)
	}
	a := r.api
	fmt.Fprintf(w, "task API (%s): %d calls (%d queries, %d updates, %d failed with 500), 429s: %d (%d after warm-up)\n",
		r.limit, a.Calls, a.Queries, a.Updates, a.Failed, a.Throttled, a.ThrottledWarm)
	fmt.Fprintf(w, "request rate: peak %d in 1 s, sustained %.2f/s\n", a.Peak, a.Sustained)
	for _, wrong := range r.wrongAnswers {
		fmt.Fprintf(w, "webhook answered wrongly: %s\n", wrong)
	}
	r.checks.write(w)
	fmt.Fprintf(w, "took %v\n", r.took.Round(10*time.Millisecond))
}
