package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/ratelimit"
)

// A client talks to the task API (the fake one in the demo). Every request
// goes through hc, whose transport does the pacing.
type client struct {
	base  string // e.g. "http://127.0.0.1:8081"
	token string // sent as a bearer token when not empty
	hc    *http.Client
}

const fenceHeader = "X-Nextup-Fence" // the fence of the run a request belongs to

// userAgent names the program and its process, so that the API's logs
// (and the fake API's checks) tell instances apart.
var userAgent = userAgentOf(os.Getpid())

func userAgentOf(pid int) string { return fmt.Sprintf("notion-nextup (pid %d)", pid) }

// A statusError is an answer other than 2xx.
type statusError struct {
	Method, Path string
	Status       int
	Body         string // the API's error code and message, or the raw body
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, e.Body)
}

func (c *client) listTasks(ctx context.Context, user string) ([]Task, error) {
	var out struct {
		Results []Task `json:"results"`
	}
	err := c.do(ctx, http.MethodPost, "/v1/tasks/query", map[string]string{"assignee": user}, &out)
	return out.Results, err
}

func (c *client) updateTask(ctx context.Context, u Update) error {
	return c.do(ctx, http.MethodPatch, "/v1/tasks/"+url.PathEscape(u.ID), u, nil)
}

func (c *client) do(ctx context.Context, method, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.base, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	// With a shared store, the lease of the run carries a fence that grows
	// with every lease of the user: an API that takes it as a precondition
	// can refuse the requests of a run whose lease another instance took
	// over. The fake API does; Notion has no such header and ignores it.
	if fence, ok := pacer.Fence(ctx); ok {
		req.Header.Set(fenceHeader, strconv.FormatUint(fence, 10))
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	// A 429 or 503 that the transport could not absorb: the Runner pauses
	// for every user and runs this one again after the Retry-After.
	if err := ratelimit.CheckResponse(resp); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		se := &statusError{Method: method, Path: path, Status: resp.StatusCode}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		var e struct{ Code, Message string }
		if json.Unmarshal(msg, &e) == nil && e.Code != "" {
			se.Body = e.Code + ": " + e.Message
		} else {
			se.Body = strings.TrimSpace(string(msg))
		}
		return se
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
