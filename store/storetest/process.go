package storetest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A Process is one OS process of a multi-process scenario or measurement:
// the test binary run again with one test selected, the process's entry
// (Child, or ServeThroughput, say), which the engine's test file provides.
// The parent and the process talk over pipes: the process prints "ready"
// once connected, starts on "go", stops when its standard input closes,
// and prints how many values it handled, as "handled N".
type Process struct {
	cmd *exec.Cmd
	in  *os.File
	out *bufio.Scanner
}

// StartProcess starts the test binary again, running only the top-level
// test named test, with the environment variable name set to args, which
// hold no white space (see ProcessArgs), and waits until it is ready.
func StartProcess(t *testing.T, test, name string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), name+"="+strings.Join(args, " "))
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	cmd.Stdin, cmd.Stderr = r, os.Stderr
	require.NoError(t, cmd.Start())
	r.Close()
	sc := bufio.NewScanner(out)
	require.True(t, sc.Scan())
	require.Equal(t, "ready", sc.Text())
	return &Process{cmd, w, sc}
}

// Go tells the process to start.
func (c *Process) Go(t *testing.T) {
	t.Helper()
	_, err := fmt.Fprintln(c.in, "go")
	require.NoError(t, err)
}

// Stop tells the process to stop, waits until it exited, and returns how
// many values it handled and the CPU time it spent in its whole run.
func (c *Process) Stop(t *testing.T) (handled int, cpu time.Duration) {
	t.Helper()
	c.Close(t)
	for line, ok := c.Scan(); ok; line, ok = c.Scan() {
		if n, ok := strings.CutPrefix(line, "handled "); ok {
			m, err := strconv.Atoi(n)
			require.NoError(t, err)
			handled += m
		}
	}
	c.Wait(t)
	return handled, c.cmd.ProcessState.UserTime() + c.cmd.ProcessState.SystemTime()
}

// Scan returns the next line the process printed, as it prints it; false
// once its output ended. One goroutine at a time may call it, and none
// while Stop runs.
func (c *Process) Scan() (string, bool) {
	if !c.out.Scan() {
		return "", false
	}
	return c.out.Text(), true
}

// Close tells the process to stop, as Stop does, without waiting.
func (c *Process) Close(t *testing.T) {
	t.Helper()
	require.NoError(t, c.in.Close())
}

// Wait waits until the process, whose output Scan read to its end,
// exited, and checks that it succeeded.
func (c *Process) Wait(t *testing.T) {
	t.Helper()
	require.NoError(t, c.cmd.Wait())
}

// ProcessArgs returns the arguments that StartProcess gave the process in
// the environment variable name. Where it is not set or empty, the test
// runs on its own, not as a Process, and ProcessArgs skips it.
func ProcessArgs(t *testing.T, name string) []string {
	env := os.Getenv(name)
	if env == "" {
		t.Skip("a process of a multi-process test, which starts it")
	}
	return strings.Fields(env)
}
