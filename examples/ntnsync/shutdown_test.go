//go:build unix

package main

import (
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/url"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestShutdownClosesStalledClients starts the program, gets three page
// changes synced, opens a connection that sends a webhook's headers and 6
// bytes of its body and then nothing, and sends SIGTERM: the program
// closes that connection instead of waiting for it, finishes the work and
// exits 0 well before its -grace of 10 s.
func TestShutdownClosesStalledClients(t *testing.T) {
	dir := t.TempDir()
	fake := newDemoNotion(time.Millisecond, 0, time.Now())
	api := httptest.NewServer(fake)
	defer api.Close()
	secret := []byte("stall-test-secret")
	p := startProgram(t, "-api-url", api.URL, "-dir", dir, "-listen", "127.0.0.1:0", "-secret", string(secret),
		"-rate", "1000", "-burst", "100", "-grace", "10s")
	hook := p.webhookURL(t)
	post := signedPoster(hook, secret)
	for _, id := range demoPages[:3] {
		fake.edit(id, time.Now())
		status, err := post(t.Context(), fmt.Appendf(nil, `{"type":"page.content_updated","entity":{"id":%q,"type":"page"}}`, id))
		require.NoError(t, err)
		require.Equal(t, 200, status)
	}

	u, err := url.Parse(hook)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprintf(conn, "POST /webhook HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 80\r\n\r\n{\"type", u.Host)
	require.NoError(t, err)
	// The server reads the headers as they arrive; the client has nothing
	// to wait on, so it gives the server a moment.
	time.Sleep(200 * time.Millisecond)

	start := time.Now()
	p.signal(t, syscall.SIGTERM)
	code := p.wait(t, 20*time.Second)
	took := time.Since(start)
	require.Equal(t, 0, code, "every page synced: the stalled client is no failure\n%s", p.out)
	require.Less(t, took, 5*time.Second, "the shutdown did not wait for the stalled client\n%s", p.out)

	// The stalled connection was closed by the program.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = io.ReadAll(conn)
	require.NoError(t, err, "the program closed the connection")
	requireMirrorMatches(t, dir, fake, demoPages[:3])
}
