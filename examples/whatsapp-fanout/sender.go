package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
}

// sender is the messaging service.
type sender interface {
	// PrepareMedia uploads a media item for an account and returns the
	// handle to send it by.
	PrepareMedia(ctx context.Context, account, src string) (handle string, err error)
	// Send delivers one message. Errors may be a *permanentError (do not
	// retry: the group refuses the account) or a *retryAfterError (the
	// account is sending too fast).
	Send(ctx context.Context, m message) error
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
// with the token as a bearer token. 4xx answers other than 429 are
// permanent; 429 carries Retry-After.
type httpSender struct {
	client *http.Client
	base   string
	token  string
}

func (h *httpSender) PrepareMedia(ctx context.Context, account, src string) (string, error) {
	var out struct {
		Handle string `json:"handle"`
	}
	err := h.post(ctx, "/media", map[string]string{"account": account, "source": src}, &out)
	return out.Handle, err
}

func (h *httpSender) Send(ctx context.Context, m message) error {
	return h.post(ctx, "/messages", m, nil)
}

func (h *httpSender) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if h.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		d, ok := ratelimit.RetryAfter(resp.Header, time.Now())
		if !ok {
			d = time.Minute
		}
		return &retryAfterError{d}
	case resp.StatusCode/100 == 4:
		return &permanentError{fmt.Sprintf("POST %s: %s: %s", path, resp.Status, bytes.TrimSpace(b))}
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("POST %s: %s", path, resp.Status)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func isPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}
