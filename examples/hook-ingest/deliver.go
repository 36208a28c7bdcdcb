package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// batch is what a processor sends to the remote service: the events of one
// session that came in since its last run.
type batch struct {
	Session string  `json:"session"`
	Run     string  `json:"run"`
	Reason  string  `json:"reason"`
	Events  []event `json:"events"`
}

// httpDeliver returns a deliverFunc that POSTs each batch as JSON to url,
// with the token as a bearer token when set. Any answer but 2xx is an error.
func httpDeliver(client *http.Client, url, token string) deliverFunc {
	return func(ctx context.Context, session string, c claim) error {
		body, err := json.Marshal(batch{Session: session, Run: c.Run, Reason: c.Reason, Events: c.Events})
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("POST %s: %s", url, resp.Status)
		}
		return nil
	}
}

// printDeliver returns a deliverFunc that writes each batch as a JSON line
// to w, for trying the hook without a remote service.
func printDeliver(w io.Writer) deliverFunc {
	enc := json.NewEncoder(w)
	return func(_ context.Context, session string, c claim) error {
		return enc.Encode(batch{Session: session, Run: c.Run, Reason: c.Reason, Events: c.Events})
	}
}

// deliverTimeout bounds one delivery attempt.
const deliverTimeout = 10 * time.Second
