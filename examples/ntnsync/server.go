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

// defaultTimeouts suit webhooks: bodies of at most 1 MiB (Read allows 70
// KB/s) from a sender that retries.
var defaultTimeouts = serverTimeouts{Header: 5 * time.Second, Read: 15 * time.Second, Write: 15 * time.Second, Idle: time.Minute, Answer: time.Second}

// A server serves the webhook. A client that stalls mid-request holds its
// connection for Read at most, and a shutdown does not wait for it.
type server struct {
	srv    *http.Server
	ln     net.Listener
	answer time.Duration
	open   atomic.Int64 // connections not closed yet
	done   chan error
}

func listen(addr string, h http.Handler, to serverTimeouts) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &server{ln: ln, answer: to.Answer, done: make(chan error, 1)}
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: to.Header, ReadTimeout: to.Read, WriteTimeout: to.Write, IdleTimeout: to.Idle,
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

func (s *server) url() string { return "http://" + s.ln.Addr().String() }

// shutdown closes the listener, gives the requests in progress up to Answer
// (or until ctx ends) to get their answers, then closes the connections
// left: clients stalled mid-request, answered nothing, which the sender
// retries. It returns how many it closed so, and waits for Serve to end.
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
