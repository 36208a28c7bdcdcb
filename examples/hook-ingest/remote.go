package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// remote is the demo's stand-in for the service that processes batches: an
// HTTP server on loopback that checks the bearer token, takes work to
// process each batch, and records what it applied. It honours the batch's
// idempotency key and the attempt's fence, as a remote must to apply each
// batch once: it refuses a fence below the highest it has seen for the
// session, on arrival and again when the work is done, and it applies each
// key once, answering a repeat with success. It also watches for two
// requests of one session being processed at the same time.
//
// Like a real service, it finishes a request it has started whether or not
// the sender is still there: a sender killed mid-request does not undo it.
type remote struct {
	token string
	work  time.Duration
	// hold, if set, runs in each request after the fence was admitted
	// and before the work: a test holds a request open with it.
	hold func(b batch)

	srv  *http.Server
	url  string
	done chan struct{}
	stop context.CancelFunc // ends the work of requests still running at Close
	ctx  context.Context

	mu       sync.Mutex
	fence    map[string]uint64 // the highest fence seen per session
	applied  map[string]bool   // idempotency keys applied
	active   map[string]int    // requests of a session being processed now
	maxAct   map[string]int    // the most ever seen at once per session
	stale    map[string]int    // requests refused for a stale fence, per session
	repeated map[string]int    // requests whose key was applied already, per session
	received []batch
}

// remoteRecord is what the remote saw.
type remoteRecord struct {
	Applied    []batch        // batches applied, in order of completion
	Concurrent map[string]int // the most requests of a session processed at once
	Stale      map[string]int // requests refused for a fence below one seen before
	Repeated   map[string]int // requests whose key was applied already: answered 200, not applied again
}

// startRemote serves a remote on addr; hold may be nil.
func startRemote(addr, token string, work time.Duration, hold func(batch)) (*remote, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &remote{
		token:    token,
		work:     work,
		hold:     hold,
		url:      "http://" + ln.Addr().String() + "/batches",
		done:     make(chan struct{}),
		ctx:      ctx,
		stop:     stop,
		fence:    map[string]uint64{},
		applied:  map[string]bool{},
		active:   map[string]int{},
		maxAct:   map[string]int{},
		stale:    map[string]int{},
		repeated: map[string]int{},
	}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(r.done)
		r.srv.Serve(ln)
	}()
	return r, nil
}

// Close stops the server, lets the requests under way finish (for up to 5
// seconds) and waits for it.
func (r *remote) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	r.stop()
	if err != nil {
		err = errors.Join(err, r.srv.Close())
	}
	<-r.done
	return err
}

func (r *remote) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	want := "Bearer " + r.token
	if subtle.ConstantTimeCompare([]byte(req.Header.Get("Authorization")), []byte(want)) != 1 {
		http.Error(w, "bad token", http.StatusUnauthorized)
		return
	}
	key := req.Header.Get(idempotencyKeyHeader)
	fence, err := strconv.ParseUint(req.Header.Get(fenceHeader), 10, 64)
	if key == "" || err != nil || fence == 0 {
		http.Error(w, "want the headers "+idempotencyKeyHeader+" and "+fenceHeader+" (> 0)", http.StatusBadRequest)
		return
	}
	var b batch
	if err := json.NewDecoder(req.Body).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !r.admit(b.Session, fence) {
		http.Error(w, "stale fence "+strconv.FormatUint(fence, 10)+": a later attempt was seen", http.StatusConflict)
		return
	}
	if r.hold != nil {
		r.hold(b)
	}
	// The batch takes a while to process, long enough for new events of
	// the session to arrive meanwhile. The sender leaving does not stop it.
	werr := sleep(r.ctx, r.work)
	status := r.apply(b, key, fence, werr)
	switch status {
	case http.StatusConflict:
		http.Error(w, "stale fence "+strconv.FormatUint(fence, 10)+": a later attempt came in meanwhile", status)
	case http.StatusOK:
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(status)
	default:
		w.WriteHeader(status)
	}
}

// admit starts a request of session with fence, unless a higher fence was
// seen: that sender was superseded.
func (r *remote) admit(session string, fence uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fence < r.fence[session] {
		r.stale[session]++
		return false
	}
	r.fence[session] = fence
	r.active[session]++
	r.maxAct[session] = max(r.maxAct[session], r.active[session])
	return true
}

// apply ends a request: it applies the batch unless its fence went stale
// meanwhile or its key was applied before, and returns the status to
// answer.
func (r *remote) apply(b batch, key string, fence uint64, werr error) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.active[b.Session]--
	switch {
	case werr != nil:
		return http.StatusServiceUnavailable
	case fence < r.fence[b.Session]:
		r.stale[b.Session]++
		return http.StatusConflict
	case r.applied[key]:
		r.repeated[b.Session]++
		return http.StatusOK
	}
	r.applied[key] = true
	r.received = append(r.received, b)
	return http.StatusNoContent
}

// record returns what the remote saw so far.
func (r *remote) record() remoteRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return remoteRecord{
		Applied:    slices.Clone(r.received),
		Concurrent: maps.Clone(r.maxAct),
		Stale:      maps.Clone(r.stale),
		Repeated:   maps.Clone(r.repeated),
	}
}
