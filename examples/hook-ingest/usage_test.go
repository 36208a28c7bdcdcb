package main

import (
	"errors"
	"os/exec"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// The built program answers -h with its subcommands and exits 0; each
// subcommand's -h lists only that subcommand's flags. A bad command line
// exits 2.
func TestUsage(t *testing.T) {
	subcommands := []string{"hook-ingest event -session ID", "hook-ingest drain -session ID", "hook-ingest [demo]"}
	demoFlags := []string{"max-wait", "quiet"}
	drainFlags := []string{"dir", "max-wait", "quiet", "session", "timeout", "token", "url"}
	eventFlags := []string{"dir", "event", "max-wait", "quiet", "session", "timeout", "token", "url"}
	for _, tc := range []struct {
		args  []string
		flags []string
	}{
		{[]string{"-h"}, demoFlags},
		{[]string{"-help"}, demoFlags},
		{[]string{"demo", "-h"}, demoFlags},
		{[]string{"event", "-h"}, eventFlags},
		{[]string{"drain", "-h"}, drainFlags},
	} {
		out, err := command(t.Context(), "program", tc.args...).CombinedOutput()
		require.NoError(t, err, "%v exits 0: %s", tc.args, out)
		for _, s := range subcommands {
			require.Contains(t, string(out), s, "%v", tc.args)
		}
		require.Equal(t, tc.flags, listedFlags(string(out)), "%v", tc.args)
	}

	for _, args := range [][]string{{"-no-such-flag"}, {"drain", "-crash-once"}, {"drain", "extra"}, {"no-such-command"}, {"event"}} {
		out, err := command(t.Context(), "program", args...).CombinedOutput()
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "%v: %v: %s", args, err, out)
		require.Equal(t, 2, ee.ExitCode(), "%v: %s", args, out)
	}
}

var flagLine = regexp.MustCompile(`(?m)^  -([a-z-]+)`)

// listedFlags returns the names of the flags a usage text lists, in order.
func listedFlags(usage string) []string {
	var names []string
	for _, m := range flagLine.FindAllStringSubmatch(usage, -1) {
		names = append(names, m[1])
	}
	return names
}
