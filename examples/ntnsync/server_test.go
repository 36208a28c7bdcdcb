package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stall opens a connection to s that sends a webhook's headers and 6
// bytes of its 80-byte body, then nothing.
func stall(t *testing.T, s *server) net.Conn {
	t.Helper()
	host := strings.TrimPrefix(s.url(), "http://")
	conn, err := net.Dial("tcp", host)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: %s\r\nContent-Length: 80\r\n\r\n{\"type", host)
	require.NoError(t, err)
	return conn
}

func TestServerTimesOutStalledRequests(t *testing.T) {
	reading := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reading <- struct{}{}
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	s, err := listen("127.0.0.1:0", h, serverTimeouts{Header: time.Second, Read: 300 * time.Millisecond, Write: time.Second, Idle: time.Second, Answer: time.Second})
	require.NoError(t, err)
	defer s.shutdown(t.Context())
	conn := stall(t, s)
	<-reading
	start := time.Now()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadAll(conn)
	require.NoError(t, err, "the server closed the connection")
	require.Less(t, time.Since(start), 2*time.Second, "after the read timeout, not the client's")
}

func TestServerShutdownClosesStalledRequests(t *testing.T) {
	reading := make(chan struct{}, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reading <- struct{}{}
		_, _ = io.ReadAll(r.Body)
	})
	s, err := listen("127.0.0.1:0", h, serverTimeouts{Header: time.Minute, Read: time.Minute, Write: time.Minute, Idle: time.Minute, Answer: 100 * time.Millisecond})
	require.NoError(t, err)
	conn := stall(t, s)
	<-reading
	start := time.Now()
	stalled, err := s.shutdown(t.Context())
	require.NoError(t, err)
	require.Equal(t, 1, stalled)
	require.Less(t, time.Since(start), 2*time.Second, "the shutdown waited Answer, not the read timeout")
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadAll(conn)
	require.NoError(t, err, "the connection is closed")
}
