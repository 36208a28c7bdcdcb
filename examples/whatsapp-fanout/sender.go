package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/pacerkit/pacer/ratelimit"
)

// message is one part of a reminder on its way to one group.
type message struct {
	Account string `json:"account"`
	Group   string `json:"group"`
	Part    int    `json:"part"` // index of the part in the reminder
	Text    string `json:"text,omitempty"`
	Media   string `json:"media,omitempty"` // handle returned by PrepareMedia
	// Key is the part's idempotency key (partKey), sent in the
	// Idempotency-Key header.
	Key string `json:"-"`
}

// sender is the messaging service.
type sender interface {
	// PrepareMedia uploads a media item for an account and returns the
	// handle to send it by.
	PrepareMedia(ctx context.Context, account, src string) (handle string, err error)
	// Send delivers one message, once per m.Key: when the service has
	// delivered a message with that key before, it delivers nothing and
	// says so with duplicate. Errors may be a *permanentError (do not
	// retry: the group refuses the account) or a *retryAfterError (the
	// account is sending too fast).
	Send(ctx context.Context, m message) (duplicate bool, err error)
}

// permanentError means retrying cannot help: the group is skipped.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

// retryAfterError means the service asks the account to wait.
type retryAfterError struct{ wait time.Duration }

func (e *retryAfterError) Error() string { return fmt.Sprintf("rate limited, retry after %v", e.wait) }

// httpSender talks to a messaging gateway over HTTP:
//
//	POST {base}/media     {"account","source"}         -> {"handle"}
//	POST {base}/messages  message as JSON              -> 2xx
//
// with the token as a bearer token, and each message's idempotency key in
// the Idempotency-Key header. A 2xx answer with "Idempotent-Replayed: true"
// says the gateway had delivered that key before and suppressed this
// duplicate. 4xx answers other than 429 are permanent; 429 carries
// Retry-After.
type httpSender struct {
	client *http.Client
	base   string
	token  string
}

func (h *httpSender) PrepareMedia(ctx context.Context, account, src string) (string, error) {
	var out struct {
		Handle string `json:"handle"`
	}
	_, err := h.post(ctx, "/media", "", map[string]string{"account": account, "source": src}, &out)
	return out.Handle, err
}

func (h *httpSender) Send(ctx context.Context, m message) (bool, error) {
	resp, err := h.post(ctx, "/messages", m.Key, m, nil)
	if err != nil {
		return false, err
	}
	return resp.Header.Get("Idempotent-Replayed") == "true", nil
}

// post sends in as JSON, with key as the Idempotency-Key if not empty, and
// decodes a 2xx answer's body into out, if not nil.
func (h *httpSender) post(ctx context.Context, path, key string, in, out any) (*http.Response, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		d, ok := ratelimit.HeaderRetryAfter(resp.Header, time.Now())
		if !ok {
			d = time.Minute
		}
		return nil, &retryAfterError{d}
	case resp.StatusCode/100 == 4:
		return nil, &permanentError{fmt.Sprintf("POST %s: %s: %s", path, resp.Status, bytes.TrimSpace(b))}
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("POST %s: %s", path, resp.Status)
	}
	if out != nil {
		return resp, json.Unmarshal(b, out)
	}
	return resp, nil
}

func isPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// partKey is the idempotency key of part k of a reminder for one group: the
// same in every attempt and every run, so a gateway that honours it
// delivers the part once even when it is sent again — after a retry whose
// first attempt did arrive, or after a restart that lost the record of a
// part the gateway had accepted. It is a hash of the reminder's id, the
// group and the part's index, so any id fits in an HTTP header.
func partKey(reminderID, group string, k int) string {
	h := sha256.New()
	for _, s := range []string{reminderID, group, strconv.Itoa(k)} {
		// Length-prefixed, so that no two triples share a key.
		h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
