package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// A client fetches pages from the page API. Every request goes through hc,
// whose transport does the pacing.
type client struct {
	base  string
	token string
	hc    *http.Client
}

// A statusError is an answer other than 200.
type statusError struct {
	Status int
	Body   string
}

func (e *statusError) Error() string { return fmt.Sprintf("page API: %d %s", e.Status, e.Body) }

// permanent reports whether retrying cannot help: the page is gone or the
// request is refused, as opposed to a 5xx or a 429.
func (e *statusError) permanent() bool {
	return e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests && e.Status != http.StatusRequestTimeout
}

func (c *client) fetch(ctx context.Context, id string) (page, error) {
	var p page
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.base, "/")+"/v1/pages/"+url.PathEscape(id), nil)
	if err != nil {
		return p, err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return p, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return p, &statusError{Status: resp.StatusCode, Body: strings.TrimSpace(string(msg))}
	}
	err = json.NewDecoder(resp.Body).Decode(&p)
	return p, err
}

// A page is a Notion page as the page API returns it, reduced to what the
// sync needs: a title and a flat list of blocks.
type page struct {
	ID         string    `json:"id"`
	Title      string    `json:"title"`
	Version    int       `json:"version"`
	LastEdited time.Time `json:"last_edited_time"`
	Blocks     []block   `json:"blocks"`
}

// A block is one paragraph-level element of a page.
type block struct {
	Type     string `json:"type"` // heading_1..3, paragraph, bulleted_list_item, numbered_list_item, to_do, quote, code, divider
	Text     string `json:"text,omitempty"`
	Checked  bool   `json:"checked,omitempty"`  // to_do
	Language string `json:"language,omitempty"` // code
}
