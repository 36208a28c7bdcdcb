package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The built program answers -h with its modes and flags and exits 0; a
// flag it does not know exits 2.
func TestUsage(t *testing.T) {
	exe := filepath.Join(t.TempDir(), "hook0-fifo")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", exe, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	for _, h := range []string{"-h", "-help", "--help"} {
		out, err := exec.CommandContext(t.Context(), exe, h).CombinedOutput()
		require.NoError(t, err, "%s exits 0: %s", h, out)
		for _, want := range []string{
			"hook0-fifo [flags]", "the demo",
			"hook0-fifo -sub NAME,URL,TYPES,MODE", "POST /events",
			"hook0-fifo -receive", "fake receiver",
			"-postgres", "-fifo-workers", "-secret",
		} {
			require.Contains(t, string(out), want, h)
		}
	}

	out, err = exec.CommandContext(t.Context(), exe, "-no-such-flag").CombinedOutput()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v: %s", err, out)
	require.Equal(t, 2, ee.ExitCode(), "%s", out)
	require.Contains(t, string(out), "flag provided but not defined: -no-such-flag")
}
