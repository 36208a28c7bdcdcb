package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/pacerkit/pacer"
)

// A pipeline recomputes one user's next-up list: load the user's tasks, rank
// them, project completion dates in business days, and write back only the
// tasks whose rank or date changed. Its handle method is the Runner's
// handler, so the Runner guarantees one call per user at a time.
type pipeline struct {
	api   *client
	today func() time.Time // nil: time.Now
	log   *slog.Logger
}

// handle is the Runner handler for one user's coalesced events.
func (p *pipeline) handle(ctx context.Context, user string, events []Event) error {
	tasks, err := p.api.listTasks(ctx, user)
	if err != nil {
		return classify(err)
	}
	today := time.Now()
	if p.today != nil { // the demo's fixed day
		today = p.today()
	}
	updates := changed(tasks, plan(tasks, today))
	for _, u := range updates {
		if err := p.api.updateTask(ctx, u); err != nil {
			return classify(err)
		}
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
