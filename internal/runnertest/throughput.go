package runnertest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// A Child is one process of an end-to-end throughput measurement: the test
// binary run again with one test selected, which calls ServeThroughput.
// The parent and the child talk over pipes: the child prints "ready" once
// connected, starts on "go", stops when its standard input closes, and
// prints how many values it handled.
type Child struct {
	cmd *exec.Cmd
	in  *os.File
	out *bufio.Scanner
}

// StartChild starts the test binary again, running only the test named
// test, with the environment variable name set to args (see ChildArgs),
// and waits until it is ready.
func StartChild(t *testing.T, test, name string, args ...string) *Child {
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
	return &Child{cmd, w, sc}
}

// Go tells the child to start handling.
func (c *Child) Go(t *testing.T) {
	t.Helper()
	_, err := fmt.Fprintln(c.in, "go")
	require.NoError(t, err)
}

// Stop tells the child to stop, waits until it exited, and returns how
// many values it handled and the CPU time it spent in its whole run.
func (c *Child) Stop(t *testing.T) (handled int, cpu time.Duration) {
	t.Helper()
	require.NoError(t, c.in.Close())
	for c.out.Scan() {
		if n, ok := strings.CutPrefix(c.out.Text(), "handled "); ok {
			m, err := strconv.Atoi(n)
			require.NoError(t, err)
			handled += m
		}
	}
	require.NoError(t, c.cmd.Wait())
	return handled, c.cmd.ProcessState.UserTime() + c.cmd.ProcessState.SystemTime()
}

// ChildArgs returns the arguments that StartChild gave the child in the
// environment variable name. Where it is not set or empty, the test runs on its own,
// not as a Child, and ChildArgs skips it.
func ChildArgs(t *testing.T, name string) []string {
	env := os.Getenv(name)
	if env == "" {
		t.Skip("a child process of a measurement, started by it")
	}
	return strings.Fields(env)
}

// ServeThroughput is the body of a Child: a Runner on s's queue q with 4
// workers, MaxBatch maxBatch and a no-op handler (with AckInBackground if
// PACER_BENCH_ACK_IN_BACKGROUND is 1), which starts when "go"
// comes on standard input and stops when that closes, then prints how many
// values it handled. s must be connected already: the parent starts its
// clock once every child is ready.
func ServeThroughput[V any](t *testing.T, s store.Store, q string, maxBatch int) {
	var handled atomic.Int64
	background := os.Getenv("PACER_BENCH_ACK_IN_BACKGROUND") == "1"
	r, err := pacer.New(pacer.Config[string, V]{Store: s, Name: q, Workers: 4, MaxBatch: maxBatch, AckInBackground: background},
		func(_ context.Context, _ string, batch []V) error { handled.Add(int64(len(batch))); return nil })
	require.NoError(t, err)
	ctx := context.Background()
	fmt.Println("ready")
	in := bufio.NewScanner(os.Stdin)
	require.True(t, in.Scan())
	require.Equal(t, "go", in.Text())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	for in.Scan() { // until the parent closes it
	}
	require.NoError(t, r.Shutdown(ctx))
	require.NoError(t, <-done)
	fmt.Printf("handled %d\n", handled.Load())
}
