package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
)

// A pipeline recomputes one user's next-up list: load the user's tasks, rank
// them, project completion dates in business days, and write back only the
// tasks whose rank or date changed. Its handle method is the Runner's
// handler, so the Runner guarantees one call per user at a time; the
// pipeline counts any overlap anyway, so the demo can check that guarantee.
type pipeline struct {
	api   *client
	today func() time.Time
	log   *slog.Logger
	// started, when set, is called as a run of user begins (the demo uses
	// it to edit a task while that user is being processed).
	started func(user string)

	mu       sync.Mutex
	running  map[string]bool
	overlaps int            // runs that began while the same user was running
	calls    map[string]int // handler calls per user
	written  map[string]int // tasks written per user
}

func newPipeline(api *client, today func() time.Time, log *slog.Logger) *pipeline {
	return &pipeline{
		api: api, today: today, log: log,
		running: make(map[string]bool),
		calls:   make(map[string]int),
		written: make(map[string]int),
	}
}

// handle is the Runner handler for one user's coalesced events.
func (p *pipeline) handle(ctx context.Context, user string, events []Event) error {
	p.enter(user)
	defer p.leave(user)
	if p.started != nil {
		p.started(user)
	}
	tasks, err := p.api.listTasks(ctx, user)
	if err != nil {
		return classify(err)
	}
	updates := changed(tasks, plan(tasks, p.today()))
	for _, u := range updates {
		if err := p.api.updateTask(ctx, u); err != nil {
			return classify(err)
		}
		p.mu.Lock()
		p.written[user]++
		p.mu.Unlock()
	}
	var since time.Duration
	if len(events) > 0 {
		since = time.Since(events[0].At).Round(time.Millisecond)
	}
	p.log.Info("recomputed", "user", user, "events", len(events), "since_first_event", since, "tasks", len(tasks), "written", len(updates), "ids", eventIDs(events))
	return nil
}

// eventIDs lists the events' IDs, comma-separated, for the log: which
// events a recompute took into account.
func eventIDs(events []Event) string {
	ids := make([]string, 0, len(events))
	for _, e := range events {
		if e.ID != "" {
			ids = append(ids, e.ID)
		}
	}
	return strings.Join(ids, ",")
}

func (p *pipeline) enter(user string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.running[user] {
		p.overlaps++
	}
	p.running[user] = true
	p.calls[user]++
}

func (p *pipeline) leave(user string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.running, user)
}

// classify tells the Runner what an API error means: 5xx answers, 408 and
// network errors are transient and retried with backoff, and any other
// answer (404 unknown user, 401 bad token, 400) is permanent: retrying
// cannot help, so the events are dropped. A 429 or 503 never gets here as
// a statusError: client.do returns it as a *ratelimit.LimitError, which
// the Runner handles itself.
func classify(err error) error {
	var se *statusError
	if !errors.As(err, &se) || se.Status >= 500 || se.Status == http.StatusRequestTimeout {
		return err
	}
	return pacer.Permanent(err)
}
