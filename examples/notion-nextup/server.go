package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// routes is the program's HTTP surface: the webhook and a stats page.
func routes(a *app) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/webhook", a.hook)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]any{"runner": a.runner.Stats(), "bucket": a.bucket.Stats()})
	})
	return mux
}

// A server is an http.Server listening on its own goroutine.
type server struct {
	srv  *http.Server
	addr string
	done chan error
}

// listen starts serving h on addr ("127.0.0.1:0" picks a free port).
func listen(addr string, h http.Handler) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, addr: ln.Addr().String(), done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// url is the server's base URL.
func (s *server) url() string { return "http://" + s.addr }

// shutdown stops accepting requests, waits for those in progress and for
// the serving goroutine.
func (s *server) shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// postJSON returns a demo poster that sends webhooks to url over HTTP.
func postJSON(hc *http.Client, url string) func(ctx context.Context, body []byte, signature string) (int, error) {
	return func(ctx context.Context, body []byte, signature string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		if signature != "" {
			req.Header.Set(signatureHeader, signature)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
}
