package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// A server is an http.Server on a listener it opened itself.
type server struct {
	srv *http.Server
	ln  net.Listener
}

func listen(addr string, h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, ln: ln}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *server) url() string { return "http://" + s.ln.Addr().String() }

func (s *server) shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// serve runs the dispatcher for real, serving routes at addr. On SIGINT or
// SIGTERM it stops taking events, delivers what is queued (up to 30 s;
// with a Store, only what is in flight: the store keeps the rest), and
// prints the figures.
func serve(ctx context.Context, cfg dispatcherConfig, addr string, stdout io.Writer) error {
	d, err := newDispatcher(cfg)
	if err != nil {
		return err
	}
	srv, err := listen(addr, routes(d))
	if err != nil {
		return err
	}
	cfg.Logger.Warn("listening", "events", srv.url()+"/events", "subscriptions", len(cfg.Subs))
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- d.run(runCtx) }()

	<-ctx.Done()
	if d.stored {
		cfg.Logger.Warn("shutting down: finishing the deliveries in flight; the store keeps the rest for the next dispatcher")
	} else {
		cfg.Logger.Warn("shutting down: delivering what is queued")
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = srv.shutdown(shutCtx)
	if serr := d.shutdown(shutCtx); err == nil {
		err = serr
	}
	if rerr := <-done; err == nil && rerr != nil {
		err = rerr
	}
	stopRun()
	took := time.Since(start)
	var stored *storedLetters
	if d.stored {
		if ids, n, _, serr := d.storedDead(shutCtx, deadMark{}); serr == nil {
			stored = &storedLetters{n: n, ids: ids, all: true}
		} else if err == nil {
			err = serr
		}
	}
	newReport(d, nil, took, stored).print(stdout)
	return err
}

// serveReceiver runs only the fake receiver until SIGINT or SIGTERM, then
// prints what each endpoint saw.
func serveReceiver(ctx context.Context, rc *receiver, addr string) error {
	srv, err := listen(addr, rc)
	if err != nil {
		return err
	}
	fmt.Printf("fake receiver at %s/hooks/NAME; %.0f%% of requests fail; Ctrl-C prints what it saw\n", srv.url(), 100*rc.cfg.FailRate)
	<-ctx.Done()
	shutCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.shutdown(shutCtx)
	rc.print(os.Stdout)
	return err
}

// maxEventBody bounds the body of POST /events.
const maxEventBody = 1 << 20

// readEvent reads the body of POST /events, which must be one JSON object
// with a "type" and nothing after it but white space. It reads the whole
// body, up to maxEventBody, before it decides, so that a body too large
// is refused as such (413) whatever it starts with; anything else it
// refuses is malformed (400). Nothing it refuses is published in part.
func readEvent(w http.ResponseWriter, r *http.Request) (Event, int, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEventBody))
	if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
		return Event{}, http.StatusRequestEntityTooLarge, fmt.Errorf("event body over %d bytes", tooLarge.Limit)
	}
	if err != nil {
		return Event{}, http.StatusBadRequest, fmt.Errorf("reading the event body: %w", err)
	}
	// Unmarshal, unlike a Decoder, takes exactly one JSON value: trailing
	// data or a second value is a syntax error.
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return Event{}, http.StatusBadRequest, fmt.Errorf(`want one JSON object {"type": "...", "payload": {...}}: %w`, err)
	}
	if ev.Type == "" {
		return Event{}, http.StatusBadRequest, errors.New(`want one JSON object {"type": "...", "payload": {...}}: no "type"`)
	}
	return ev, 0, nil
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
