package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/pacerkit/pacer/examples/internal/proctest"
	"github.com/stretchr/testify/require"
)

// command returns a command that runs this test binary as a child process
// (see childEnv) with args.
func command(ctx context.Context, child string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"="+child,
		// Under -race, a process sleeps 1 s at exit to let racing
		// goroutines be caught; the tests wait for these exits.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	cmd.WaitDelay = time.Second
	return cmd
}

// TestDemoProcesses plays the demo with an OS process per event, as a hook
// runner starts them, and a fourth session, "crash", whose first processor
// kills itself with SIGKILL right after claiming its batch: the kernel
// drops its flocks, so the next process finds no lock held and delivers
// that batch. A drain process per session then sweeps up anything left.
func TestDemoProcesses(t *testing.T) {
	quiet, maxWait := 300*time.Millisecond, 900*time.Millisecond
	plans := append(defaultPlans(quiet, maxWait), plan{Session: "crash", At: series(0, 6, quiet/20)})
	rem := newRemote("t", 50*time.Millisecond, nil)
	srv, err := hookhttp.Listen("127.0.0.1:0", rem)
	require.NoError(t, err)
	defer srv.Shutdown(context.Background())
	url, dir := srv.URL()+"/batches", t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	// Start every event process and wait until all are up, then release
	// each at its planned instant, so the time processes take to start on
	// a busy machine does not blur the planned bursts and pauses.
	type child struct {
		session string
		cmd     *exec.Cmd
		stdin   io.WriteCloser
		stdout  *bufio.Reader
		out     proctest.Output // stderr
		at      time.Duration
	}
	var children []*child
	defer func() {
		for _, c := range children {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	}()
	for _, p := range plans {
		for i, at := range p.At {
			c := &child{session: p.Session, at: at}
			c.cmd = command(ctx, "event", dir, p.Session, strconv.Itoa(i+1), url, quiet.String(), maxWait.String(), strconv.FormatBool(p.Session == "crash"))
			c.cmd.Stderr = &c.out
			c.stdin, err = c.cmd.StdinPipe()
			require.NoError(t, err)
			stdout, err := c.cmd.StdoutPipe()
			require.NoError(t, err)
			c.stdout = bufio.NewReader(stdout)
			require.NoError(t, c.cmd.Start())
			children = append(children, c)
		}
	}
	for _, c := range children {
		line, err := c.stdout.ReadString('\n')
		require.Equal(t, "up\n", line, "%v: %s", err, &c.out)
	}
	start := time.Now().Add(50 * time.Millisecond)
	for _, c := range children {
		_, err := fmt.Fprintln(c.stdin, start.Add(c.at).Format(time.RFC3339Nano))
		require.NoError(t, errors.Join(err, c.stdin.Close()))
	}
	var failures []string
	killed := map[string]int{}
	for _, c := range children {
		err := c.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL && c.session == "crash" {
			killed[c.session]++
		} else if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v %s", c.session, err, &c.out))
		}
	}
	started := len(children)
	children = nil
	// Sweep up anything a dead process left with no one to process it.
	for _, p := range plans {
		out, err := command(ctx, "program", "drain", "-session", p.Session, "-dir", dir, "-quiet", quiet.String(),
			"-max-wait", maxWait.String(), "-url", url, "-token", "t").CombinedOutput()
		if err != nil {
			failures = append(failures, fmt.Sprintf("drain %s: %v %s", p.Session, err, out))
		}
	}
	elapsed := time.Since(start)
	require.NoError(t, ctx.Err())
	logs, err := readLogs(dir, plans)
	require.NoError(t, err)
	r := buildReport(plans, failures, logs, rem, elapsed)
	var out strings.Builder
	r.print(&out)
	t.Log("\n" + out.String())

	require.True(t, r.OK(), out.String())
	requireSessionsHeld(t, r, 4)
	events := 0
	for _, p := range plans {
		events += len(p.At)
	}
	require.Equal(t, events, started, "one process per event")
	crash := r.Sessions[3]
	require.Equal(t, map[string]int{"crash": 1}, killed, "one processor killed")
	require.Equal(t, 1, crash.Died, "its run never finished")
	require.Equal(t, 1, crash.Reasons[reasonRecovered], "the next process delivered its batch")
	runs := logs["crash"]
	for i, dead := range runs {
		if dead.finished() {
			continue
		}
		for _, e := range dead.Events {
			require.True(t, slices.ContainsFunc(runs[i+1:], func(r batchRun) bool {
				return r.finished() && r.Err == "" && slices.Contains(r.Events, e)
			}), "event %s of the dead run was delivered by a later run", e.ID)
		}
	}
}

// demoEvent is an event process of TestDemoProcesses. It says it is up,
// waits for the instant its parent writes on stdin, then records its event
// and processes its session, as `hook-ingest event` does. With crash, the
// session's first processor kills itself with SIGKILL right after claiming
// a batch, before sending it.
//
// Its arguments are the state directory, the session, the event id, the
// remote's URL, the quiet period, the max-wait and crash.
func demoEvent(args []string) int {
	dir, session, id, url := args[0], args[1], args[2], args[3]
	quiet, err1 := time.ParseDuration(args[4])
	maxWait, err2 := time.ParseDuration(args[5])
	fmt.Println("up")
	line, err3 := bufio.NewReader(os.Stdin).ReadString('\n')
	at, err4 := time.Parse(time.RFC3339Nano, strings.TrimSpace(line))
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	time.Sleep(time.Until(at))
	s := newSession(dir, session)
	deliver := httpDeliver(&http.Client{Timeout: deliverTimeout}, url, "t")
	p := params{Quiet: quiet, MaxWait: maxWait, Deliver: func(ctx context.Context, session string, c claim) error {
		if args[6] == "true" && firstCrash(s) {
			// Die the hard way: no deferred unlock runs, the kernel
			// drops the flocks.
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			time.Sleep(time.Minute)
		}
		return deliver(ctx, session, c)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := record(ctx, s, id)
	if err == nil {
		err = process(ctx, p, s, id)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// firstCrash reports whether this is the first crash of the session,
// creating its marker file.
func firstCrash(s session) bool {
	f, err := os.OpenFile(s.base+".crashed", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false
	}
	return f.Close() == nil
}
