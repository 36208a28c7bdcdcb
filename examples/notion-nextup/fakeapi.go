package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A fakeAPI is a small Notion-like task API held in memory: list a user's
// tasks, update one task. It enforces the same limit Notion documents, an
// average of 3 requests per second with short bursts, and answers 429 with
// Retry-After when a request comes too early. It counts what it sees so the
// demo can report and check the client's behaviour. It is safe for
// concurrent use.
//
//	POST  /v1/tasks/query  {"assignee": "alice"}          -> {"results": [Task...]}
//	PATCH /v1/tasks/{id}   {"rank": 1, "projected": "…"}  -> Task
type fakeAPI struct {
	now   func() time.Time // the fake's clock
	rate  float64          // requests per second allowed on average
	burst int              // requests allowed at once

	mu        sync.Mutex
	limit     gcra
	tasks     map[string]*Task
	users     map[string]bool
	failQuery map[string]int // user -> queries still to fail with 500
	stats     apiStats
	calls     []apiCall
	warm      bool // a request was accepted
	drained   bool // the budget is spent as of the first request

	// fences holds the newest fence seen per user (see fenceHeader).
	fences map[string]uint64
	// throttleAt, when > 0, is the request (counting from 1) answered 429
	// with Retry-After throttleFor whatever the budget; throttled then
	// gets the time of that answer.
	throttleAt  int
	throttleFor time.Duration
	throttled   chan time.Time
	// onQuery, when set, is called with each accepted task query, as it
	// is answered, with f.mu held.
	onQuery func(caller, user string)
}

// An apiCall is one request the fake API answered.
type apiCall struct {
	At     time.Time
	Caller string // its User-Agent
	Status int
	User   string // the user it concerned, once known
	Query  bool   // a task query, not an update
}

// apiStats is what the fake API observed.
type apiStats struct {
	Calls         int            // requests, 429s included
	Queries       int            // accepted task queries
	Updates       int            // accepted task updates
	Throttled     int            // answered 429 by the limit
	ThrottledWarm int            // answered 429 by the limit after the first accepted request
	Failed        int            // answered 500 by fault injection
	NotFound      map[string]int // task queries answered 404 (unknown user), per assignee
	Induced       int            // answered 429 because told to (see throttleCall), not counted in Throttled
	Unfenced      int            // accepted requests without a fence
	Stale         int            // requests behind their user's newest fence, refused with 409
	Peak          int            // most requests that arrived within any 1 s
	Sustained     float64        // requests per second from first to last arrival
}

// newFakeAPI returns an API limited to rate requests per second with bursts
// of burst. With drained, its budget is spent when the first request comes,
// as if another client of the same integration had just used it, so that
// request gets a 429.
func newFakeAPI(rate float64, burst int, drained bool, now func() time.Time) *fakeAPI {
	f := &fakeAPI{
		now:       now,
		rate:      rate,
		burst:     burst,
		tasks:     make(map[string]*Task),
		users:     make(map[string]bool),
		failQuery: make(map[string]int),
		fences:    make(map[string]uint64),
		limit:     newGCRA(rate, burst, gcraSlack, now()),
		drained:   drained,
	}
	return f
}

// put stores t as if a person edited it in the UI: no request is counted.
func (f *fakeAPI) put(t Task) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.tasks[t.ID]; ok {
		t.Rank, t.Projected = old.Rank, old.Projected
	}
	f.tasks[t.ID] = &t
	f.users[t.Assignee] = true
}

// failQueries makes the next n task queries for user fail with a 500.
func (f *fakeAPI) failQueries(user string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failQuery[user] += n
}

// userTasks returns user's tasks sorted by ID.
func (f *fakeAPI) userTasks(user string) []Task {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.userTasksLocked(user)
}

func (f *fakeAPI) userTasksLocked(user string) []Task {
	var out []Task
	for _, id := range slices.Sorted(maps.Keys(f.tasks)) {
		if t := f.tasks[id]; t.Assignee == user {
			out = append(out, *t)
		}
	}
	return out
}

// snapshot returns the statistics so far.
func (f *fakeAPI) snapshot() apiStats {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.stats
	s.NotFound = maps.Clone(f.stats.NotFound)
	arrivals := make([]time.Time, len(f.calls))
	for i, c := range f.calls {
		arrivals[i] = c.At
	}
	s.Peak = peakPerSecond(arrivals)
	if n := len(arrivals); n > 1 {
		if span := arrivals[n-1].Sub(arrivals[0]); span > 0 {
			s.Sustained = float64(n-1) / span.Seconds()
		}
	}
	return s
}

// written returns the task updates the API accepted, per user.
func (f *fakeAPI) written() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]int{}
	for _, c := range f.calls {
		if !c.Query && c.Status == http.StatusOK {
			out[c.User]++
		}
	}
	return out
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	f.stats.Calls++
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	call := apiCall{At: now, Caller: r.UserAgent()}
	defer func() {
		call.Status = sw.status
		f.calls = append(f.calls, call)
	}()
	w = sw
	if f.drained {
		f.limit.drain(now)
		f.drained = false
	}
	if f.stats.Calls == f.throttleAt {
		f.stats.Induced++
		f.throttled <- now
		w.Header().Set("Retry-After", fmt.Sprint(int((f.throttleFor+time.Second-1)/time.Second)))
		apiError(w, http.StatusTooManyRequests, "rate_limited", "rate limited")
		return
	}
	if ok, wait := f.limit.allow(now); !ok {
		f.stats.Throttled++
		if f.warm {
			f.stats.ThrottledWarm++
		}
		secs := max(1, int((wait+time.Second-1)/time.Second))
		w.Header().Set("Retry-After", fmt.Sprint(secs))
		apiError(w, http.StatusTooManyRequests, "rate_limited", "rate limited")
		return
	}
	f.warm = true
	id, isTask := strings.CutPrefix(r.URL.Path, "/v1/tasks/")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/tasks/query":
		call.Query = true
		call.User = f.query(w, r)
	case r.Method == http.MethodPatch && isTask && id != "":
		call.User = f.update(w, r, id)
	default:
		apiError(w, http.StatusNotFound, "invalid_request_url", "no such endpoint")
	}
}

// query answers a task query and returns the user it asked for.
func (f *fakeAPI) query(w http.ResponseWriter, r *http.Request) string {
	var q struct {
		Assignee string `json:"assignee"`
	}
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
		apiError(w, http.StatusBadRequest, "validation_error", err.Error())
		return ""
	}
	if !f.users[q.Assignee] {
		if f.stats.NotFound == nil {
			f.stats.NotFound = make(map[string]int)
		}
		f.stats.NotFound[q.Assignee]++
		apiError(w, http.StatusNotFound, "object_not_found", "no user "+q.Assignee)
		return q.Assignee
	}
	if !f.fenced(w, r, q.Assignee) {
		return q.Assignee
	}
	if f.failQuery[q.Assignee] > 0 {
		f.failQuery[q.Assignee]--
		f.stats.Failed++
		apiError(w, http.StatusInternalServerError, "internal_server_error", "try again")
		return q.Assignee
	}
	f.stats.Queries++
	if f.onQuery != nil {
		f.onQuery(r.UserAgent(), q.Assignee)
	}
	writeJSON(w, map[string]any{"results": f.userTasksLocked(q.Assignee)})
	return q.Assignee
}

// update writes a task's rank and projection and returns its assignee.
func (f *fakeAPI) update(w http.ResponseWriter, r *http.Request, id string) string {
	t, ok := f.tasks[id]
	if !ok {
		apiError(w, http.StatusNotFound, "object_not_found", "no task "+id)
		return ""
	}
	var u Update
	if err := json.NewDecoder(r.Body).Decode(&u); err != nil {
		apiError(w, http.StatusBadRequest, "validation_error", err.Error())
		return t.Assignee
	}
	if !f.fenced(w, r, t.Assignee) {
		return t.Assignee
	}
	f.stats.Updates++
	t.Rank, t.Projected = u.Rank, u.Projected
	writeJSON(w, t)
	return t.Assignee
}

// fenced checks the fence r carries (see fenceHeader) against the newest
// one seen for user, which it then becomes. A request behind it comes from
// a run whose lease a newer run of the same user took over: it is refused
// with 409 and counted as stale, and fenced returns false. A request with
// no fence (from a program without a shared store) is counted and passes.
func (f *fakeAPI) fenced(w http.ResponseWriter, r *http.Request, user string) bool {
	fence, err := strconv.ParseUint(r.Header.Get(fenceHeader), 10, 64)
	if err != nil {
		f.stats.Unfenced++
		return true
	}
	if fence < f.fences[user] {
		f.stats.Stale++
		apiError(w, http.StatusConflict, "conflict_error", fmt.Sprintf("fence %d is behind %d: a newer run of %s began", fence, f.fences[user], user))
		return false
	}
	f.fences[user] = fence
	return true
}

// A statusWriter remembers the status a handler answered.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}

func apiError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"object": "error", "status": status, "code": code, "message": msg})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// peakPerSecond returns the most arrivals (sorted) within any window of 1 s.
func peakPerSecond(arrivals []time.Time) int {
	peak, lo := 0, 0
	for hi, t := range arrivals {
		for t.Sub(arrivals[lo]) >= time.Second {
			lo++
		}
		peak = max(peak, hi-lo+1)
	}
	return peak
}

// edit changes task id as a person would in the UI (no request is counted)
// and returns its assignee.
func (f *fakeAPI) edit(id string, change func(*Task)) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.tasks[id]
	change(t)
	return t.Assignee
}
