package hookhttp

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// A Server is an http.Server listening on its own goroutine.
type Server struct {
	srv  *http.Server
	addr string
	done chan error
}

// Listen starts serving h on addr ("127.0.0.1:0" picks a free port).
func Listen(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, addr: ln.Addr().String(), done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's base URL.
func (s *Server) URL() string { return "http://" + s.addr }

// Shutdown stops accepting requests, waits for those in progress and for
// the serving goroutine.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// PostJSON returns a poster that sends signed JSON webhooks to url; an
// empty signature sends none.
func PostJSON(hc *http.Client, url string) func(ctx context.Context, body []byte, signature string) (int, error) {
	return func(ctx context.Context, body []byte, signature string) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		if signature != "" {
			req.Header.Set(SignatureHeader, signature)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
}
