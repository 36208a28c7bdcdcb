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
	"sync"
	"time"
)

// remote is the demo's stand-in for the service that processes batches: an
// HTTP server on loopback that checks the bearer token, takes work to
// process each batch, and records what it received. It also watches for two
// batches of one session being processed at the same time.
type remote struct {
	token string
	work  time.Duration

	srv  *http.Server
	url  string
	done chan struct{}

	mu       sync.Mutex
	active   map[string]int // batches of a session being processed now
	maxAct   map[string]int // the most ever seen at once per session
	received []batch
}

func startRemote(addr, token string, work time.Duration) (*remote, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	r := &remote{
		token:  token,
		work:   work,
		url:    "http://" + ln.Addr().String() + "/batches",
		done:   make(chan struct{}),
		active: map[string]int{},
		maxAct: map[string]int{},
	}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(r.done)
		r.srv.Serve(ln)
	}()
	return r, nil
}

// Close stops the server and waits for it.
func (r *remote) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
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
	var b batch
	if err := json.NewDecoder(req.Body).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.active[b.Session]++
	r.maxAct[b.Session] = max(r.maxAct[b.Session], r.active[b.Session])
	r.mu.Unlock()

	// The batch takes a while to process, long enough for new events of
	// the session to arrive meanwhile.
	err := sleep(req.Context(), r.work)

	r.mu.Lock()
	r.active[b.Session]--
	if err == nil {
		r.received = append(r.received, b)
	}
	r.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// batches returns what was received, in order of completion, and the most
// batches of any one session that were ever processed at once.
func (r *remote) batches() ([]batch, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.received), maps.Clone(r.maxAct)
}
