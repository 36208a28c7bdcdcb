package main

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// maxBody is the largest webhook body accepted; larger ones get 413.
const maxBody = 1 << 20

// A notification is the part of a Notion webhook event the sync reads.
type notification struct {
	Type   string `json:"type"` // page.content_updated, page.created, ...
	Entity struct {
		ID   string `json:"id"`
		Type string `json:"type"` // page, database, comment
	} `json:"entity"`
	VerificationToken string `json:"verification_token"` // only in the subscription handshake
}

// A webhook is the HTTP endpoint Notion calls when a page changes. It puts
// the page on the durable queue and only then answers 200, so an answered
// change is never lost; then it wakes the worker. It answers 400 to a body
// that is not an event, 401 to a bad signature when a secret is set, 413 to
// a body over 1 MiB, 500 when the queue cannot be written (the sender
// retries) and 503 once intake has stopped. Events about anything but a page
// are answered 200 and ignored. It is safe for concurrent use.
type webhook struct {
	secret []byte
	q      *queue
	wake   wakeup
	log    *slog.Logger

	closed   atomic.Bool
	accepted atomic.Int64 // page changes queued
	ignored  atomic.Int64 // answered 200, nothing queued
	refused  atomic.Int64 // answered 4xx or 5xx
}

// stop makes the webhook refuse every later request with 503.
func (h *webhook) stop() { h.closed.Store(true) }

func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status, msg := h.serve(w, r)
	if status != http.StatusOK {
		h.refused.Add(1)
		http.Error(w, msg, status)
		return
	}
	w.WriteHeader(status)
}

func (h *webhook) serve(w http.ResponseWriter, r *http.Request) (int, string) {
	if h.closed.Load() {
		return http.StatusServiceUnavailable, "shutting down"
	}
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
	var n notification
	if err := json.Unmarshal(body, &n); err != nil {
		return http.StatusBadRequest, "bad JSON: " + err.Error()
	}
	if n.VerificationToken != "" {
		// Notion's subscription handshake: the token is the secret to
		// configure, so it is logged, not checked.
		h.log.Warn("webhook verification token received; set it as the secret", "token", n.VerificationToken)
		h.ignored.Add(1)
		return http.StatusOK, ""
	}
	if len(h.secret) > 0 && !hookhttp.Verify(h.secret, body, r.Header.Get(hookhttp.SignatureHeader)) {
		return http.StatusUnauthorized, "bad signature"
	}
	if n.Entity.Type != "page" {
		h.ignored.Add(1)
		return http.StatusOK, ""
	}
	if !validPageID.MatchString(n.Entity.ID) {
		return http.StatusBadRequest, "bad page id"
	}
	if err := h.q.put(n.Entity.ID, time.Now()); err != nil {
		h.log.Error("queueing page", "page", n.Entity.ID, "err", err)
		return http.StatusInternalServerError, "could not queue the change"
	}
	h.accepted.Add(1)
	h.wake.notify()
	return http.StatusOK, ""
}
