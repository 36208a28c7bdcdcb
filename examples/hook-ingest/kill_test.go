package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// buildProgram builds this program, without the race detector, into a
// directory of t's and returns its path.
func buildProgram(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "hook-ingest")
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", exe, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return exe
}

// TestKillMidDelivery kills an event process with SIGKILL while its POST is
// in flight, held open by the remote. The kernel frees the dead process's
// flock at once, so a drain process sends the batch again while the first
// request is still at the remote: the two deliveries overlap. The batch's
// idempotency key and the attempts' fences let the remote apply it once,
// in either order: the first request finishing after the second is
// refused for its stale fence; finishing before it, it makes the second a
// repeat of an applied key.
func TestKillMidDelivery(t *testing.T) {
	exe := buildProgram(t)
	for _, tc := range []struct {
		name string
		// firstDone: the held first request finishes before the second
		// is sent; otherwise after it.
		firstDone     bool
		stale, repeat int
	}{
		{name: "the first request finishes after the second", stale: 1},
		{name: "the first request finishes before the second", firstDone: true, repeat: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived, release := make(chan batch, 1), make(chan struct{})
			var requests atomic.Int32
			hold := func(b batch) {
				if requests.Add(1) == 1 {
					arrived <- b
					<-release
				}
			}
			rem, err := startRemote("127.0.0.1:0", "t", 0, hold)
			require.NoError(t, err)
			released := false
			defer func() {
				if !released {
					close(release)
				}
				require.NoError(t, rem.Close())
			}()
			dir := t.TempDir()
			args := func(cmd string) []string {
				return []string{cmd, "-session", "s", "-dir", dir, "-quiet", "10ms", "-max-wait", "10ms",
					"-url", rem.url, "-token", "t", "-timeout", "20s"}
			}

			first := exec.CommandContext(t.Context(), exe, append(args("event"), "-event", "1")...)
			var out bytes.Buffer
			first.Stdout, first.Stderr = &out, &out
			require.NoError(t, first.Start())
			var sent batch
			select {
			case sent = <-arrived:
			case <-time.After(20 * time.Second):
				_ = first.Process.Kill()
				_ = first.Wait()
				require.FailNow(t, "the first POST never arrived", "%s", &out)
			}
			require.NoError(t, first.Process.Signal(syscall.SIGKILL))
			err = first.Wait()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "%v: %s", err, &out)
			ws := ee.Sys().(syscall.WaitStatus)
			require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "killed mid-delivery: %v", err)

			if tc.firstDone {
				close(release)
				released = true
				// The remote applies the dead sender's batch; wait
				// for it, polling with a deadline.
				deadline := time.Now().Add(10 * time.Second)
				for len(rem.record().Applied) == 0 {
					require.True(t, time.Now().Before(deadline), "the first request was never applied")
					time.Sleep(5 * time.Millisecond)
				}
			}
			drain, err := exec.CommandContext(t.Context(), exe, args("drain")...).CombinedOutput()
			require.NoError(t, err, "drain: %s", drain)
			if !tc.firstDone {
				close(release)
				released = true
			}
			require.NoError(t, rem.Close(), "the held request finishes")

			seen := rem.record()
			require.Len(t, seen.Applied, 1, "the batch is applied once")
			require.Equal(t, []event{{ID: "1", At: sent.Events[0].At}}, seen.Applied[0].Events)
			require.Equal(t, sent.Key, seen.Applied[0].Key)
			require.Equal(t, tc.stale, seen.Stale["s"], "requests refused for a stale fence")
			require.Equal(t, tc.repeat, seen.Repeated["s"], "requests repeating an applied key")
			if !tc.firstDone {
				require.Equal(t, 2, seen.Concurrent["s"], "the two deliveries did overlap at the remote")
			}

			// The drain sent the batch again, under its key and the
			// next fence, and left nothing behind.
			runs, err := readRuns(newSession(dir, "s").logPath())
			require.NoError(t, err)
			require.Len(t, runs, 2)
			require.False(t, runs[0].finished(), "the killed run")
			require.Equal(t, reasonRecovered, runs[1].Reason)
			require.Equal(t, runs[0].Key, runs[1].Key)
			require.Equal(t, []uint64{1, 2}, []uint64{runs[0].Fence, runs[1].Fence})
			require.True(t, runs[1].finished())
			require.Empty(t, runs[1].Err)
			st, err := newSession(dir, "s").load()
			require.NoError(t, err)
			require.Equal(t, state{Fence: 2}, st)
		})
	}
}
