package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// batch is what a processor sends to the remote service: the events of one
// session that came in since its last run, with the batch's idempotency key
// and the attempt's fence (see claim).
type batch struct {
	Session string `json:"session"`
	claim
}

func newBatch(session string, c claim) batch {
	c.Sending = false // state, not news for the remote
	return batch{session, c}
}

// The headers that let a remote refuse or merge a batch sent twice. The
// remote should apply each Idempotency-Key once (and answer a repeat with
// success, so the sender stops), and refuse a request whose fence is below
// the highest it has seen for the session: its sender was superseded.
const (
	idempotencyKeyHeader = "Idempotency-Key"
	fenceHeader          = "X-Hook-Ingest-Fence"
)

// deliverTimeout bounds one delivery attempt.
const deliverTimeout = 10 * time.Second

// httpDeliver returns a deliverFunc that POSTs each batch as JSON to url,
// with the batch's key and the attempt's fence as headers, and the token
// as a bearer token when set. Any answer but 2xx is an error.
func httpDeliver(client *http.Client, url, token string) deliverFunc {
	return func(ctx context.Context, session string, c claim) error {
		body, err := json.Marshal(newBatch(session, c))
		if err != nil {
			return err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(idempotencyKeyHeader, c.Key)
		req.Header.Set(fenceHeader, strconv.FormatUint(c.Fence, 10))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("POST %s: %s %.200s", url, resp.Status, strings.TrimSpace(string(answer)))
		}
		return nil
	}
}

// printDeliver returns a deliverFunc that writes each batch as a JSON line
// to w, for trying the hook without a remote service.
func printDeliver(w io.Writer) deliverFunc {
	enc := json.NewEncoder(w)
	return func(_ context.Context, session string, c claim) error {
		return enc.Encode(newBatch(session, c))
	}
}
