package frozenproxy_test

import (
	"bufio"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/frozenproxy"
)

// echo starts a server that answers each line with the same line, closed
// when t ends.
func echo(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		var conns sync.WaitGroup
		defer conns.Wait()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Go(func() {
				defer c.Close()
				lines := bufio.NewScanner(c)
				for lines.Scan() {
					if _, err := c.Write(append(lines.Bytes(), '\n')); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// ask writes line on c and returns the answer, or the read's error.
func ask(c net.Conn, r *bufio.Reader, line string) (string, error) {
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

// A proxy forwards until frozen; then a connection through it stays open
// but silent, old or new, until Close cuts it.
func TestFreeze(t *testing.T) {
	p := frozenproxy.Start(t, echo(t))
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	got, err := ask(c, r, "hello")
	require.NoError(t, err)
	require.Equal(t, "hello\n", got)

	p.Freeze()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	_, err = ask(c, r, "again")
	require.ErrorIs(t, err, os.ErrDeadlineExceeded, "no answer, and no end of connection")
	c2, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err, "a new connection is accepted")
	defer c2.Close()
	require.NoError(t, c2.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	_, err = ask(c2, bufio.NewReader(c2), "new")
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)

	p.Close()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = r.ReadString('\n')
	require.Error(t, err)
	require.NotErrorIs(t, err, os.ErrDeadlineExceeded, "Close ends the connection")
}
