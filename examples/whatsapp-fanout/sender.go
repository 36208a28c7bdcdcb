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
	Key     string `json:"-"`               // idempotency key (partKey), sent as the Idempotency-Key header
}

// sender is the messaging service.
type sender interface {
	// PrepareMedia uploads a media item for an account and returns the
	// handle to send it by.
	PrepareMedia(ctx context.Context, account, src string) (handle string, err error)
	// Send delivers one message, once per m.Key: for a key delivered
	// before it delivers nothing and says duplicate. Errors may be a
	// *permanentError (the group refuses the account) or a
	// *retryAfterError (the account sends too fast).
	Send(ctx context.Context, m message) (duplicate bool, err error)
}

type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

func isPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type retryAfterError struct{ wait time.Duration }

func (e *retryAfterError) Error() string { return fmt.Sprintf("rate limited, retry after %v", e.wait) }

// httpSender talks to a messaging gateway over HTTP (README.md): POST
// {base}/media and {base}/messages, with a bearer token and each message's
// Idempotency-Key. "Idempotent-Replayed: true" on a 2xx marks a duplicate
// it suppressed; a 429 carries Retry-After; other 4xx are permanent.
type httpSender struct {
	client      *http.Client
	base, token string
}

func (h *httpSender) PrepareMedia(ctx context.Context, account, src string) (string, error) {
	var out struct{ Handle string }
	_, body, err := h.post(ctx, "/media", "", map[string]string{"account": account, "source": src})
	if err == nil {
		err = json.Unmarshal(body, &out)
	}
	return out.Handle, err
}

func (h *httpSender) Send(ctx context.Context, m message) (bool, error) {
	resp, _, err := h.post(ctx, "/messages", m.Key, m)
	return err == nil && resp.Header.Get("Idempotent-Replayed") == "true", err
}

// post sends in as JSON, with key as the Idempotency-Key if not empty, and
// returns a 2xx answer and its body.
func (h *httpSender) post(ctx context.Context, path, key string, in any) (*http.Response, []byte, error) {
	body, _ := json.Marshal(in) // strings and ints only
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
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
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		d, ok := ratelimit.HeaderRetryAfter(resp.Header, time.Now())
		if !ok {
			d = time.Minute
		}
		return nil, nil, &retryAfterError{d}
	case resp.StatusCode/100 == 4:
		return nil, nil, &permanentError{fmt.Sprintf("POST %s: %s: %s", path, resp.Status, bytes.TrimSpace(b))}
	case resp.StatusCode/100 != 2:
		return nil, nil, fmt.Errorf("POST %s: %s", path, resp.Status)
	}
	return resp, b, nil
}

// partKey is the idempotency key of part k of a reminder for one group, the
// same in every attempt and every run, so that a gateway that honours it
// delivers the part once however often it is sent. It is a hash, so that
// any ids fit in a header.
func partKey(reminderID, group string, k int) string {
	h := sha256.New()
	for _, s := range []string{reminderID, group, strconv.Itoa(k)} {
		// Length-prefixed, so that no two triples share a key.
		h.Write([]byte(strconv.Itoa(len(s)) + ":" + s))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
