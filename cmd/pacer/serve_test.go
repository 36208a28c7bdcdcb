package main

import (
	"bufio"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serve starts pacer serve with args and returns the console's base URL
// and the process, which it interrupts and waits for after t, requiring
// exit status 0.
func serve(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "-listen", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		require.NoError(t, cmd.Process.Signal(os.Interrupt))
		require.NoError(t, cmd.Wait(), "pacer serve exits 0 once interrupted")
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	_, base, found := strings.Cut(strings.TrimSpace(line), " on ")
	require.True(t, found, line)
	return base
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestServe(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		seed(t, e)
		base := serve(t, e.flags...)
		code, page := get(t, base+"?counts=inline") // the overview with its counts, as without a script
		require.Equal(t, http.StatusOK, code)
		assert.Contains(t, page, ">mail<", "the overview lists the queue")
		code, page = get(t, base+"queue?queue="+url.QueryEscape(mailQueue))
		require.Equal(t, http.StatusOK, code)
		assert.Contains(t, page, "mailbox full", "the queue's page shows the held key's error")
		assert.NotContains(t, page, "confirm?", "read-only: no actions")

		// With -actions, the page links to them.
		base = serve(t, e.with("-actions")...)
		_, page = get(t, base+"queue?queue="+url.QueryEscape(mailQueue))
		assert.Contains(t, page, "confirm?")
	})
}
