package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pacerkit/pacer/examples/internal/hookhttp"
	"github.com/stretchr/testify/require"
)

// TestKillMidDelivery kills an event process with SIGKILL while its POST is
// in flight, held open by the remote. The kernel frees the dead process's
// flock at once, so the next process (a drain, or the process of the next
// event) sends the batch again while the first request is still at the
// remote: the two deliveries overlap. The batch's idempotency key and the
// attempts' fences let the remote apply it once, in either order: the
// first request finishing after the second is refused for its stale fence;
// finishing before it, it makes the second a repeat of an applied key.
func TestKillMidDelivery(t *testing.T) {
	for _, tc := range []struct {
		name string
		// firstDone: the held first request finishes before the second
		// is sent; otherwise after it.
		firstDone     bool
		next          []string // the process that comes after the kill
		stale, repeat int
	}{
		{name: "the first request finishes after the second", next: []string{"drain"}, stale: 1},
		{name: "the first request finishes before the second", firstDone: true, next: []string{"drain"}, repeat: 1},
		{name: "the next event's process recovers the batch", next: []string{"event", "-event", "2"}, stale: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived, release := make(chan batch, 1), make(chan struct{})
			var requests atomic.Int32
			rem := newRemote("t", 0, func(b batch) {
				if requests.Add(1) == 1 {
					arrived <- b
					<-release
				}
			})
			srv, err := hookhttp.Listen("127.0.0.1:0", rem)
			require.NoError(t, err)
			shutdown := sync.OnceValue(func() error { return srv.Shutdown(context.Background()) })
			released := false
			defer func() {
				if !released {
					close(release)
				}
				require.NoError(t, shutdown())
			}()
			dir := t.TempDir()
			args := func(cmd ...string) []string {
				return append(cmd, "-session", "s", "-dir", dir, "-quiet", "10ms", "-max-wait", "10ms",
					"-url", srv.URL()+"/batches", "-token", "t", "-timeout", "20s")
			}

			first := command(t.Context(), "program", args("event", "-event", "1")...)
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
				for applied(rem) == 0 {
					require.True(t, time.Now().Before(deadline), "the first request was never applied")
					time.Sleep(5 * time.Millisecond)
				}
			}
			next, err := command(t.Context(), "program", args(tc.next...)...).CombinedOutput()
			require.NoError(t, err, "%v: %s", tc.next, next)
			if !tc.firstDone {
				close(release)
				released = true
			}
			require.NoError(t, shutdown(), "the held request finishes")

			fences := []uint64{1, 2}
			if tc.next[0] == "event" {
				require.Len(t, rem.applied, 2, "the batch and the next event's")
				require.Equal(t, []event{{ID: "2", At: rem.applied[1].Events[0].At}}, rem.applied[1].Events)
				fences = []uint64{1, 2, 3}
			} else {
				require.Len(t, rem.applied, 1, "the batch is applied once")
			}
			require.Equal(t, []event{{ID: "1", At: sent.Events[0].At}}, rem.applied[0].Events)
			require.Equal(t, sent.Key, rem.applied[0].Key)
			s := rem.sessions["s"]
			require.Equal(t, tc.stale, s.stale, "requests refused for a stale fence")
			require.Equal(t, tc.repeat, s.repeated, "requests repeating an applied key")
			if !tc.firstDone {
				require.Equal(t, 2, s.maxActive, "the two deliveries did overlap at the remote")
			}

			// The next process sent the batch again, under its key and
			// the next fence, and left nothing behind.
			runs, err := readRuns(newSession(dir, "s").logPath())
			require.NoError(t, err)
			require.Len(t, runs, len(fences))
			require.False(t, runs[0].finished(), "the killed run")
			require.Equal(t, reasonRecovered, runs[1].Reason)
			require.Equal(t, runs[0].Key, runs[1].Key)
			for i, r := range runs {
				require.Equal(t, fences[i], r.Fence)
				require.Equal(t, i > 0, r.finished() && r.Err == "", "run %d", i)
			}
			st, err := newSession(dir, "s").load()
			require.NoError(t, err)
			require.Equal(t, state{Fence: fences[len(fences)-1]}, st)
		})
	}
}

// applied returns how many batches rem applied so far.
func applied(rem *remote) int {
	rem.mu.Lock()
	defer rem.mu.Unlock()
	return len(rem.applied)
}
