package main

import (
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// remote is the demo's stand-in for the service that processes batches: an
// HTTP handler that checks the bearer token, takes work to process each
// batch, and records what it applied. It applies each batch once, as a
// remote must: it refuses a fence below the highest it has seen for the
// session, on arrival and again when the work is done (409), and applies
// each idempotency key once, answering a repeat 200 with
// Idempotent-Replayed: true. Like a real service, it finishes a request
// whether or not the sender is still there.
type remote struct {
	token string
	work  time.Duration
	hold  func(b batch) // if set, runs once a request's fence is admitted: a test holds a request open with it

	mu       sync.Mutex
	sessions map[string]*remoteSession
	keys     map[string]bool // idempotency keys applied
	applied  []batch         // in order of completion
}

// remoteSession is what the remote saw of one session.
type remoteSession struct {
	fence             uint64 // the highest seen
	active, maxActive int    // requests being processed now; the most ever at once
	stale             int    // requests refused for a fence below one seen before
	repeated          int    // requests whose key was applied already: answered 200, not applied again
}

func newRemote(token string, work time.Duration, hold func(batch)) *remote {
	return &remote{token: token, work: work, hold: hold, sessions: map[string]*remoteSession{}, keys: map[string]bool{}}
}

func (r *remote) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), []byte("Bearer "+r.token)) != 1 {
		http.Error(w, "bad token", http.StatusUnauthorized)
		return
	}
	key := req.Header.Get(idempotencyKeyHeader)
	fence, err := strconv.ParseUint(req.Header.Get(fenceHeader), 10, 64)
	var b batch
	if key == "" || err != nil || fence == 0 || json.NewDecoder(req.Body).Decode(&b) != nil {
		http.Error(w, "want a JSON batch and the headers "+idempotencyKeyHeader+" and "+fenceHeader+" (> 0)", http.StatusBadRequest)
		return
	}
	if !r.admit(b.Session, fence) {
		http.Error(w, "stale fence: a later attempt was seen", http.StatusConflict)
		return
	}
	if r.hold != nil {
		r.hold(b)
	}
	// The batch takes a while to process, long enough for new events of
	// the session to arrive meanwhile.
	time.Sleep(r.work)
	switch status := r.apply(b, key, fence); status {
	case http.StatusConflict:
		http.Error(w, "stale fence: a later attempt came in meanwhile", status)
	case http.StatusOK:
		w.Header().Set("Idempotent-Replayed", "true")
		fallthrough
	default:
		w.WriteHeader(status)
	}
}

// admit starts a request of session with fence, unless a higher fence was
// seen: that sender was superseded.
func (r *remote) admit(session string, fence uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[session]
	if s == nil {
		s = &remoteSession{}
		r.sessions[session] = s
	}
	if fence < s.fence {
		s.stale++
		return false
	}
	s.fence = fence
	s.active++
	s.maxActive = max(s.maxActive, s.active)
	return true
}

// apply ends a request: it applies the batch unless its fence went stale
// meanwhile or its key was applied before, and returns the status to
// answer.
func (r *remote) apply(b batch, key string, fence uint64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sessions[b.Session]
	s.active--
	switch {
	case fence < s.fence:
		s.stale++
		return http.StatusConflict
	case r.keys[key]:
		s.repeated++
		return http.StatusOK
	}
	r.keys[key] = true
	r.applied = append(r.applied, b)
	return http.StatusNoContent
}
