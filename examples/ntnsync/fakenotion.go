package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// A fakeNotion is an in-memory page API, GET /v1/pages/{id}, that fails
// every failEvery-th fetch with a 500 and takes latency to answer. The demo
// edits its pages and counts its fetches. It is safe for concurrent use.
type fakeNotion struct {
	latency   time.Duration
	failEvery int // 0: never fail

	mu      sync.Mutex
	pages   map[string]*page
	fetches int // answered requests, failures included
	failed  int // answered 500
}

func newFakeNotion(latency time.Duration, failEvery int) *fakeNotion {
	return &fakeNotion{latency: latency, failEvery: failEvery, pages: make(map[string]*page)}
}

func (f *fakeNotion) create(p page) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pages[p.ID] = &p
}

// edit makes a new version of page id, as a person typing would, at now.
func (f *fakeNotion) edit(id string, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pages[id]
	p.Version++
	p.LastEdited = now
	p.Blocks = append(p.Blocks, block{Type: "bulleted_list_item", Text: fmt.Sprintf("revision %d", p.Version)})
}

func (f *fakeNotion) current(id string) page {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := *f.pages[id]
	p.Blocks = append([]block(nil), p.Blocks...)
	return p
}

func (f *fakeNotion) counts() (fetches, failed int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fetches, f.failed
}

func (f *fakeNotion) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, "/v1/pages/")
	if r.Method != http.MethodGet || !ok {
		http.Error(w, `{"code":"invalid_request_url"}`, http.StatusNotFound)
		return
	}
	time.Sleep(f.latency)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetches++
	if f.failEvery > 0 && f.fetches%f.failEvery == 0 {
		f.failed++
		http.Error(w, `{"code":"internal_server_error"}`, http.StatusInternalServerError)
		return
	}
	p, ok := f.pages[id]
	if !ok {
		http.Error(w, `{"code":"object_not_found"}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(p)
}
