package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

const maxBody = 1 << 20 // the largest webhook body accepted; larger ones get 413

// A notification is the part of a Notion webhook event the sync reads.
type notification struct {
	Entity struct {
		ID   string `json:"id"`
		Type string `json:"type"` // page, database, comment
	} `json:"entity"`
	VerificationToken string `json:"verification_token"` // only in the subscription handshake
}

// A webhook is the HTTP endpoint Notion calls when a page changes. It puts
// the page on the durable queue and only then answers 200, so an answered
// change is never lost; then it tells the Runner (notify). With a secret
// set, the signature is checked first, before the body is parsed. The
// answers are listed in README.md. It is safe for concurrent use.
type webhook struct {
	secret []byte
	q      *queue
	notify func(ctx context.Context, pageID string) error
	log    *slog.Logger

	// gate is held shared while a change is queued and exclusively by
	// stop, so that once stop returned no change is being queued.
	gate   sync.RWMutex
	closed atomic.Bool

	accepted atomic.Int64 // page changes queued
	ignored  atomic.Int64 // answered 200, nothing queued
}

// stop makes the webhook refuse every later request with 503, and returns
// once the changes being queued are on disk.
func (h *webhook) stop() {
	h.gate.Lock()
	h.closed.Store(true)
	h.gate.Unlock()
}

func (h *webhook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if status, msg := h.serve(w, r); status != http.StatusOK {
		http.Error(w, msg, status)
	}
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
	if len(h.secret) > 0 && !hookhttp.Verify(h.secret, body, r.Header.Get(hookhttp.SignatureHeader)) {
		return http.StatusUnauthorized, "bad signature"
	}
	var n notification
	if err := json.Unmarshal(body, &n); err != nil {
		return http.StatusBadRequest, "bad JSON: " + err.Error()
	}
	if n.VerificationToken != "" || n.Entity.Type != "page" {
		h.ignored.Add(1)
		switch {
		case n.VerificationToken == "":
		case len(h.secret) == 0:
			// Notion's subscription handshake: the token is the secret to
			// configure. Logged only while none is: with a secret set, the
			// request was signed with it, and the token is not repeated.
			h.log.Warn("webhook verification token received; set it as the secret", "token", n.VerificationToken)
		default:
			h.log.Warn("webhook verification request ignored: a secret is already set")
		}
		return http.StatusOK, ""
	}
	if !validPageID.MatchString(n.Entity.ID) {
		return http.StatusBadRequest, "bad page id"
	}
	return h.accept(r.Context(), n.Entity.ID)
}

// accept queues a change of page id on disk and tells the Runner.
func (h *webhook) accept(ctx context.Context, id string) (int, string) {
	h.gate.RLock()
	defer h.gate.RUnlock()
	if h.closed.Load() {
		return http.StatusServiceUnavailable, "shutting down"
	}
	if err := h.q.put(id, time.Now()); err != nil {
		h.log.Error("queueing page", "page", id, "err", err)
		return http.StatusInternalServerError, "could not queue the change"
	}
	h.accepted.Add(1)
	if err := h.notify(context.WithoutCancel(ctx), id); err != nil { // the change is ours even if the sender hangs up
		// The change is on disk: the next start syncs it.
		h.log.Warn("page queued but not scheduled; the next start syncs it", "page", id, "err", err)
	}
	return http.StatusOK, ""
}
