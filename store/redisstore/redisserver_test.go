//go:build unix

package redisstore_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
)

// A redisServer is a redis-server of the test's own, on a spare port, with
// its data in a temporary directory that outlives a restart. Every write
// it acknowledges is on disk first (appendonly yes, appendfsync always).
type redisServer struct {
	t    *testing.T
	bin  string
	dir  string
	addr string

	cmd    *exec.Cmd
	exited chan struct{}
}

// startRedisServer starts a redis-server found on PATH. Without one, the
// test is skipped, or fails when CI=true.
func startRedisServer(t *testing.T) *redisServer {
	t.Helper()
	bin := enginetest.RedisServer(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	s := &redisServer{t: t, bin: bin, dir: t.TempDir(), addr: addr}
	s.start()
	t.Cleanup(func() {
		if s.cmd != nil {
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
	return s
}

// start starts the server and waits until it answers.
func (s *redisServer) start() {
	t := s.t
	t.Helper()
	_, port, err := net.SplitHostPort(s.addr)
	require.NoError(t, err)
	s.cmd = exec.Command(s.bin, "--bind", "127.0.0.1", "--port", port, "--dir", s.dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--logfile", filepath.Join(s.dir, "redis.log"))
	require.NoError(t, s.cmd.Start())
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(s.cmd, s.exited)

	c := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		select {
		case <-s.exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			t.Fatalf("redis-server exited at start: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s not up after 10 s: %v", s.addr, err)
		}
		time.Sleep(10 * time.Millisecond) // polls for the server
	}
}

// stop stops the server with SIGTERM, which makes it write what it holds
// and exit, and waits until it did.
func (s *redisServer) stop() {
	t := s.t
	t.Helper()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("redis-server did not exit within 10 s of SIGTERM")
	}
	s.cmd = nil
}
