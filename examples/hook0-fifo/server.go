package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
)

// serve runs a dispatcher for real, serving routes at addr. On SIGINT or
// SIGTERM it stops taking events, delivers what is queued (up to 30 s;
// with a Store only what is in flight: the store keeps the rest for the
// next dispatcher), and prints the figures.
func serve(ctx context.Context, cfg dispatcherConfig, addr string, stdout io.Writer) error {
	d, err := newDispatcher(cfg)
	if err != nil {
		return err
	}
	srv, err := hookhttp.Listen(addr, routes(d))
	if err != nil {
		return err
	}
	cfg.Logger.Warn("listening", "events", srv.URL()+"/events", "subscriptions", len(cfg.Subs))
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- d.run(context.Background()) }()

	<-ctx.Done()
	cfg.Logger.Warn("shutting down: delivering what is queued (with a store, what is in flight: it keeps the rest)")
	shutCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = errors.Join(srv.Shutdown(shutCtx), d.shutdown(shutCtx), <-done)
	took := time.Since(start)
	var stored *storedLetters
	if cfg.Store != nil {
		ids, n, _, serr := d.storedDead(shutCtx, deadMark{})
		stored, err = &storedLetters{n: n, ids: ids, what: "in all"}, errors.Join(err, serr)
	}
	newReport(d, nil, took, stored).print(stdout)
	return err
}

// serveReceiver runs only the fake receiver until SIGINT or SIGTERM, then
// prints what each endpoint saw.
func serveReceiver(ctx context.Context, rc *receiver, addr string) error {
	srv, err := hookhttp.Listen(addr, rc)
	if err != nil {
		return err
	}
	fmt.Printf("fake receiver at %s/hooks/NAME; %.0f%% of requests fail; Ctrl-C prints what it saw\n", srv.URL(), 100*rc.cfg.FailRate)
	<-ctx.Done()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutCtx)
	rc.print(os.Stdout)
	return err
}

// routes serves the dispatcher's HTTP API: POST /events with {"type": ...,
// "payload": ...} (and an optional "id") publishes an event and answers
// 202 with the number of deliveries; GET /stats shows the figures.
func routes(d *dispatcher) http.Handler {
	var ids atomic.Uint64
	mux := http.NewServeMux()
	mux.HandleFunc("POST /events", func(w http.ResponseWriter, r *http.Request) {
		ev, status, err := readEvent(w, r)
		if err != nil {
			http.Error(w, err.Error(), status)
			return
		}
		if ev.ID == "" {
			ev.ID = fmt.Sprintf("evt_%d_%d", time.Now().Unix(), ids.Add(1))
		}
		n, err := d.publish(r.Context(), ev)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(map[string]any{"id": ev.ID, "deliveries": n})
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		newReport(d, nil, 0, nil).print(w)
	})
	return mux
}

// maxEventBody bounds the body of POST /events.
const maxEventBody = 1 << 20

// readEvent reads the body of POST /events, which must be one JSON object
// with a "type" and nothing after it but white space. It reads the whole
// body, up to maxEventBody, before it decides, so that a body too large is
// refused as such (413) whatever it starts with; anything else it refuses
// is malformed (400).
func readEvent(w http.ResponseWriter, r *http.Request) (Event, int, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBody))
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		return Event{}, http.StatusRequestEntityTooLarge, fmt.Errorf("event body over %d bytes", tooLarge.Limit)
	}
	var ev Event
	if err == nil {
		// Unmarshal, unlike a Decoder, takes exactly one JSON value:
		// trailing data or a second value is a syntax error.
		err = json.Unmarshal(body, &ev)
	}
	if err == nil && ev.Type == "" {
		err = errors.New(`no "type"`)
	}
	if err != nil {
		return Event{}, http.StatusBadRequest, fmt.Errorf(`want one JSON object {"type": "...", "payload": {...}}: %w`, err)
	}
	return ev, 0, nil
}
