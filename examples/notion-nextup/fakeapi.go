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
	failQuery map[string]int    // user -> queries still to fail with 500
	fences    map[string]uint64 // the newest fence seen per user (see fenceHeader)
	stats     apiStats
	calls     []apiCall
	warm      bool // a request was accepted
	drained   bool // the budget is spent as of the first request
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
	return &fakeAPI{now: now, rate: rate, burst: burst, drained: drained, limit: newGCRA(rate, burst, gcraSlack, now()),
		tasks: map[string]*Task{}, users: map[string]bool{}, failQuery: map[string]int{}, fences: map[string]uint64{},
		stats: apiStats{NotFound: map[string]int{}}}
}

// put stores t as if a person created it in the UI: no request is counted.
func (f *fakeAPI) put(t Task) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tasks[t.ID] = &t
	f.users[t.Assignee] = true
}

// edit changes task id as a person would in the UI (no request is counted)
// and returns its assignee.
func (f *fakeAPI) edit(id string, change func(*Task)) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f.tasks[id])
	return f.tasks[id].Assignee
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
	if n := len(arrivals); n > 1 && arrivals[n-1].After(arrivals[0]) {
		s.Sustained = float64(n-1) / arrivals[n-1].Sub(arrivals[0]).Seconds()
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
	call := apiCall{At: f.now(), Caller: r.UserAgent()}
	f.stats.Calls++
	status, body := f.serve(w, r, &call)
	call.Status = status
	f.calls = append(f.calls, call)
	writeJSON(w, status, body)
}

// serve answers one request with a status and a body, and fills in call.
func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request, call *apiCall) (int, any) {
	if f.drained {
		f.limit.drain(call.At)
		f.drained = false
	}
	if ok, wait := f.limit.allow(call.At); !ok {
		f.stats.Throttled++
		if f.warm {
			f.stats.ThrottledWarm++
		}
		return retryAfter(w, max(wait, time.Second))
	}
	f.warm = true
	id, isTask := strings.CutPrefix(r.URL.Path, "/v1/tasks/")
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/tasks/query":
		call.Query = true
		return f.query(r, call)
	case r.Method == http.MethodPatch && isTask && id != "":
		return f.update(r, id, call)
	}
	return apiError(http.StatusNotFound, "invalid_request_url", "no such endpoint")
}

func (f *fakeAPI) query(r *http.Request, call *apiCall) (int, any) {
	var q struct {
		Assignee string `json:"assignee"`
	}
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
		return apiError(http.StatusBadRequest, "validation_error", err.Error())
	}
	call.User = q.Assignee
	if !f.users[q.Assignee] {
		f.stats.NotFound[q.Assignee]++
		return apiError(http.StatusNotFound, "object_not_found", "no user "+q.Assignee)
	}
	if status, body := f.fence(r, q.Assignee); status != 0 {
		return status, body
	}
	if f.failQuery[q.Assignee] > 0 {
		f.failQuery[q.Assignee]--
		f.stats.Failed++
		return apiError(http.StatusInternalServerError, "internal_server_error", "try again")
	}
	f.stats.Queries++
	return http.StatusOK, map[string]any{"results": f.userTasksLocked(q.Assignee)}
}

func (f *fakeAPI) update(r *http.Request, id string, call *apiCall) (int, any) {
	t, ok := f.tasks[id]
	if !ok {
		return apiError(http.StatusNotFound, "object_not_found", "no task "+id)
	}
	call.User = t.Assignee
	var u Update
	if err := json.NewDecoder(r.Body).Decode(&u); err != nil {
		return apiError(http.StatusBadRequest, "validation_error", err.Error())
	}
	if status, body := f.fence(r, t.Assignee); status != 0 {
		return status, body
	}
	f.stats.Updates++
	t.Rank, t.Projected = u.Rank, u.Projected
	return http.StatusOK, t
}

// fence checks the fence r carries (see fenceHeader) against the newest one
// seen for user, which it then becomes. A request behind it comes from a
// run whose lease a newer run of the same user took over: it is refused
// with 409 and counted as stale. A request with no fence (from a program
// without a shared store) is counted and passes. fence returns status 0
// for a request that passes.
func (f *fakeAPI) fence(r *http.Request, user string) (status int, body any) {
	fence, err := strconv.ParseUint(r.Header.Get(fenceHeader), 10, 64)
	switch {
	case err != nil:
		f.stats.Unfenced++
	case fence < f.fences[user]:
		f.stats.Stale++
		return apiError(http.StatusConflict, "conflict_error", fmt.Sprintf("fence %d is behind %d: a newer run of %s began", fence, f.fences[user], user))
	default:
		f.fences[user] = fence
	}
	return 0, nil
}

// retryAfter answers 429 with a Retry-After of d, rounded up to seconds.
func retryAfter(w http.ResponseWriter, d time.Duration) (int, any) {
	w.Header().Set("Retry-After", fmt.Sprint(int((d+time.Second-1)/time.Second)))
	return apiError(http.StatusTooManyRequests, "rate_limited", "rate limited")
}

func apiError(status int, code, msg string) (int, any) {
	return status, map[string]any{"object": "error", "status": status, "code": code, "message": msg}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
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
