package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/pacerkit/pacer/examples/internal/opconsole"
	"github.com/pacerkit/pacer/ratelimit"
)

const maxBody = 1 << 20 // the largest webhook body accepted; larger ones get 413

// An Event is one task change announced by the webhook.
type Event struct {
	ID       string    `json:"id,omitempty"` // the sender's event ID, when it gives one
	Type     string    `json:"type"`
	TaskID   string    `json:"task_id"`
	Assignee string    `json:"assignee"`
	At       time.Time `json:"received_at,omitzero"` // when it was received (set by the webhook, kept in a Store)
}

// A webhook is the HTTP endpoint that receives task events and hands each
// one that names an assignee to enqueue; its answers are listed in
// README.md (202 once queued). It is safe for concurrent use.
type webhook struct {
	secret  []byte // empty: signatures are not checked
	enqueue func(ctx context.Context, user string, ev Event) error
	now     func() time.Time
	log     *slog.Logger

	skipped atomic.Int64 // events without an assignee
}

func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status, msg := h.serve(w, r)
	if status >= 400 {
		http.Error(w, msg, status)
		return
	}
	w.WriteHeader(status)
}

func (h *webhook) serve(w http.ResponseWriter, r *http.Request) (status int, msg string) {
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, "POST only"
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge, "body over 1 MiB"
	case err != nil:
		return http.StatusBadRequest, "reading body: " + err.Error()
	}
	if len(h.secret) > 0 && !hookhttp.Verify(h.secret, body, r.Header.Get(hookhttp.SignatureHeader)) {
		return http.StatusUnauthorized, "bad signature"
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return http.StatusBadRequest, "bad JSON: " + err.Error()
	}
	if ev.Assignee == "" {
		h.skipped.Add(1)
		h.log.Info("webhook: event without assignee skipped", "type", ev.Type, "task", ev.TaskID)
		return http.StatusAccepted, ""
	}
	ev.At = h.now()
	if err := h.enqueue(r.Context(), ev.Assignee, ev); err != nil {
		return http.StatusServiceUnavailable, err.Error()
	}
	return http.StatusAccepted, ""
}

// routes is the program's HTTP surface: the webhook, GET /stats and, when
// the Runner keeps its state in a store (-redis), the console at /pacer/.
func routes(runner *pacer.Runner[string, Event], hook *webhook, bucket apiLimiter) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/webhook", hook)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		st, err := runner.Stats(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		out := map[string]any{"runner": st}
		// The bucket of the process has counters; a shared one keeps its
		// state in Redis.
		if b, ok := bucket.(*ratelimit.Bucket); ok {
			out["bucket"] = b.Stats()
		}
		// Indented, for a person at a terminal; durations are in seconds
		// and times in RFC 3339, as pacer's types marshal them.
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	})
	if st := runner.View().Store(); st != nil { // read-only: no Authorize
		opconsole.MustMount(mux, st, false, runner.View())
	}
	return mux
}
