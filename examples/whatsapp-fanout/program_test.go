package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/examples/internal/proctest"
)

// The program built once for the tests that run it as OS processes,
// without the race detector, which would only slow its start.
var built struct {
	once sync.Once
	dir  string
	exe  string
	err  error
}

// program returns the path of the program built from this package.
func program(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "whatsapp-fanout-test-")
		if built.err != nil {
			return
		}
		built.exe = filepath.Join(built.dir, "whatsapp-fanout")
		out, err := exec.Command("go", "build", "-o", built.exe, ".").CombinedOutput()
		if err != nil {
			built.err = errors.Join(err, errors.New(string(out)))
		}
	})
	require.NoError(t, built.err, "go build")
	return built.exe
}

// removeBuilt removes the built program, at the end of the tests.
func removeBuilt() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// exitCode runs the program with args and returns its exit code and
// outputs.
func exitCode(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), program(t), args...)
	cmd.Dir = t.TempDir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String(), errOut.String()
	}
	require.NoError(t, err)
	return 0, out.String(), errOut.String()
}

// -h and -help print the usage on standard output and exit 0; a wrong
// flag or argument exits 2 with the usage on standard error.
func TestHelp(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		code, out, errOut := exitCode(t, arg)
		require.Equal(t, 0, code, "%s: %s%s", arg, out, errOut)
		require.Contains(t, out, "Usage: whatsapp-fanout [flags]", arg)
		require.Contains(t, out, "-reminders file", arg)
		require.Contains(t, out, "no subcommands", arg)
		require.Empty(t, errOut, arg)
	}
	code, out, errOut := exitCode(t, "-no-such-flag")
	require.Equal(t, 2, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "flag provided but not defined: -no-such-flag")
	require.Contains(t, errOut, "Usage: whatsapp-fanout [flags]")

	code, _, errOut = exitCode(t, "-reminders", "r.json", "extra")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unexpected arguments ["extra"]`)

	code, _, errOut = exitCode(t, "-redis", "redis://127.0.0.1:1/0")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "-redis needs -reminders")
}

// process is the program running as an OS process.
type process struct {
	cmd  *exec.Cmd
	out  proctest.Output // standard output and error
	done chan struct{}
	err  error // Wait's, once done is closed
}

// startProgram starts the program with args; it is killed if ctx ends.
func startProgram(t *testing.T, ctx context.Context, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.CommandContext(ctx, program(t), args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	require.NoError(t, p.cmd.Start())
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p
}

// wait waits for the process to end and returns Wait's error.
func (p *process) wait() error {
	<-p.done
	return p.err
}

// kill kills the process with SIGKILL and waits for it to end.
func (p *process) kill() error {
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.done
	return nil
}

// killed reports whether the process ended by SIGKILL.
func (p *process) killed() bool {
	var exit *exec.ExitError
	return errors.As(p.wait(), &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
}
