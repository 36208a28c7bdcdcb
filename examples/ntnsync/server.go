package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// serverTimeouts bound how long the webhook server waits for its clients.
type serverTimeouts struct {
	Header time.Duration // to read a request's headers
	Read   time.Duration // to read a whole request, body included
	Write  time.Duration // from the end of the headers to the end of the answer
	Idle   time.Duration // a kept-alive connection waits for its next request
	Answer time.Duration // a shutdown lets requests in progress get their answers
}

// defaultTimeouts suit webhooks: small bodies (at most 1 MiB, which
// Read allows at about 70 KB/s) from a sender that retries.
var defaultTimeouts = serverTimeouts{
	Header: 5 * time.Second,
	Read:   15 * time.Second,
	Write:  15 * time.Second,
	Idle:   time.Minute,
	Answer: time.Second,
}

// A server serves the webhook. A client that stalls in the middle of a
// request holds its connection for Read at most, and a shutdown does not
// wait for it: see shutdown.
type server struct {
	srv    *http.Server
	ln     net.Listener
	answer time.Duration
	open   atomic.Int64 // connections not closed yet
	done   chan error
}

// listen starts serving h on addr ("127.0.0.1:0" picks a free port).
func listen(addr string, h http.Handler, to serverTimeouts) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &server{ln: ln, answer: to.Answer, done: make(chan error, 1)}
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: to.Header,
		ReadTimeout:       to.Read,
		WriteTimeout:      to.Write,
		IdleTimeout:       to.Idle,
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				s.open.Add(1)
			case http.StateClosed, http.StateHijacked:
				s.open.Add(-1)
			}
		},
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// url is the server's base URL.
func (s *server) url() string { return "http://" + s.ln.Addr().String() }

// shutdown closes the listener and the idle connections, gives the
// requests in progress up to Answer (or until ctx ends) to get their
// answers, then closes every connection left: clients stalled in the
// middle of a request, which nothing was answered to, and which the
// sender will retry. By then the webhook is stopped, so no change is
// being queued on them. It returns how many connections it closed that
// way, and waits for the serving goroutine.
func (s *server) shutdown(ctx context.Context) (stalled int, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.answer)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		stalled = int(s.open.Load())
		err = s.srv.Close()
	}
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return stalled, err
}
