package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// programEnv, in the environment, makes the test binary run the program
// on its arguments instead of the tests, so that tests can start it as a
// real OS process and kill it.
const programEnv = "NTNSYNC_TEST_PROGRAM"

func TestMain(m *testing.M) {
	if os.Getenv(programEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// A program is ntnsync running as a child process.
type program struct {
	cmd  *exec.Cmd
	out  *syncBuffer // stdout and stderr
	done chan struct{}
	err  error // of Wait, once done is closed
}

// startProgram starts ntnsync with args; the test kills it if it is still
// running at the end.
func startProgram(t *testing.T, args ...string) *program {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), programEnv+"=1", "NTNSYNC_API_URL=", "NTNSYNC_API_TOKEN=", "NTNSYNC_WEBHOOK_SECRET=",
		// Under -race, a process sleeps 1 s at exit to let racing
		// goroutines be caught; the tests wait for these exits.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	p := &program{cmd: cmd, out: new(syncBuffer), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	require.NoError(t, cmd.Start())
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		if !p.exited() {
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func (p *program) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to timeout for the program to exit and returns its exit
// code.
func (p *program) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		require.FailNow(t, "the program did not exit", "after %v:\n%s", timeout, p.out)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	require.NoError(t, p.err)
	return 0
}

func (p *program) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Signal(sig))
}

var listeningLine = regexp.MustCompile(`msg=listening webhook=(\S+)`)

// webhookURL waits until the program serves its webhook and returns its
// URL.
func (p *program) webhookURL(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := listeningLine.FindStringSubmatch(p.out.String()); m != nil {
			return m[1]
		}
		if p.exited() || time.Now().After(deadline) {
			require.FailNow(t, "the program did not start serving", "%s", p.out)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// poster returns a function that posts signed webhooks to url.
func signedPoster(url string, secret []byte) func(ctx context.Context, body []byte) (int, error) {
	post := hookhttp.PostJSON(&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}, url)
	return func(ctx context.Context, body []byte) (int, error) {
		return post(ctx, body, hookhttp.Sign(secret, body))
	}
}

// A syncBuffer is a bytes.Buffer that a child process writes to while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
