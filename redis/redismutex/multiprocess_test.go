//go:build unix

package redismutex_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redismutex"
)

// childEnv holds, as JSON, the childConfig of a test binary re-executed to
// be one process of TestMultiProcessKill.
const childEnv = "PACER_REDISMUTEX_CHILD"

// childConfig configures a child: it takes the lock of Key.
type childConfig struct {
	URL string
	Key string
	redismutex.Config
}

// TestChildHelper is not a test: re-executed by TestMultiProcessKill with
// childEnv set, it takes a lock with LockContext, writes "locked FENCE" on
// stdout, and holds the lock (renewing it) until its stdin closes, then
// unlocks it.
func TestChildHelper(t *testing.T) {
	raw := os.Getenv(childEnv)
	if raw == "" {
		t.Skip("child process of TestMultiProcessKill")
	}
	var cfg childConfig
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	opt, err := redis.ParseURL(cfg.URL)
	require.NoError(t, err)
	c := redistest.Dial(t, opt)
	m, err := redismutex.New(t.Context(), c, cfg.Config)
	require.NoError(t, err)
	defer m.Close()
	ctx := context.Background()
	l, err := m.LockContext(ctx, cfg.Key)
	require.NoError(t, err)
	_, _ = fmt.Fprintf(os.Stdout, "locked %d\n", l.Fence())
	_, _ = io.Copy(io.Discard, os.Stdin)
	require.NoError(t, l.Unlock(ctx))
}

// A child is a running TestChildHelper.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	locked chan uint64 // its fence, once it holds the lock
	exited chan struct{}
}

func startChild(t *testing.T, cfg childConfig) *child {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	ch := &child{cmd: cmd, locked: make(chan uint64, 1), exited: make(chan struct{})}
	ch.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		defer close(ch.exited)
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			f := strings.Fields(lines.Text())
			if len(f) == 2 && f[0] == "locked" {
				n, _ := strconv.ParseUint(f[1], 10, 64)
				ch.locked <- n
			}
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-ch.exited
	})
	return ch
}

func (ch *child) waitLocked(t *testing.T, within time.Duration) uint64 {
	t.Helper()
	select {
	case f := <-ch.locked:
		return f
	case <-ch.exited:
		t.Fatal("the child exited")
	case <-time.After(within):
		t.Fatalf("the child did not get the lock within %v", within)
	}
	return 0
}

// TestMultiProcessKill runs two OS processes that take one lock: the
// first holds it, the second waits; the first is killed with SIGKILL. The
// lock outlives its dead holder until its TTL runs out, since nobody
// releases it; then the second gets it, with a bigger fence. The second
// then releases it at exit.
func TestMultiProcessKill(t *testing.T) {
	t.Parallel()
	const ttl = time.Second
	cfg := childConfig{URL: enginetest.RedisURL(), Key: "k", Config: config(t, ttl)}
	m := newLocker(t, cfg.Config)
	ctx := context.Background()

	a := startChild(t, cfg)
	fa := a.waitLocked(t, 30*time.Second)
	b := startChild(t, cfg)
	waitMarked(t, cfg.Config, "k") // b waits
	time.Sleep(ttl / 2)            // a renews
	killed := time.Now()
	require.NoError(t, a.cmd.Process.Kill())
	<-a.exited
	_, err := m.TryLock(ctx, "k")
	require.ErrorIs(t, err, redismutex.ErrLocked, "a dead holder's lock lasts until its TTL")

	fb := b.waitLocked(t, 5*ttl)
	after := time.Since(killed)
	require.Greater(t, fb, fa, "the next holder's fence is bigger")
	// a renewed the lock TTL/3 or so before it died: the lock lasts about
	// 2/3 of the TTL more.
	require.Greater(t, after, ttl/3, "the lock lapsed at its TTL, not at the death of its holder")
	require.Less(t, after, ttl+2*time.Second, "the waiter took it soon after it lapsed")
	t.Logf("fence %d, killed; fence %d, taken %v later", fa, fb, after)

	_, err = m.TryLock(ctx, "k")
	require.ErrorIs(t, err, redismutex.ErrLocked, "b holds it")
	require.NoError(t, b.stdin.Close())
	<-b.exited
	require.Zero(t, b.cmd.ProcessState.ExitCode(), "b unlocked and exited")
	l, err := m.TryLock(ctx, "k")
	require.NoError(t, err, "b released it")
	require.Greater(t, l.Fence(), fb)
	require.NoError(t, l.Unlock(ctx))
}
