package redistest

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

// A Server is a redis-server of a test's own, on a spare port, for what
// would disturb other tests (SCRIPT FLUSH, a restart) and for
// measurements, which should time their own work only. Its data
// directory is a temporary one that outlives Stop, so Start runs it again
// on the same port and data. It is killed when the test ends.
type Server struct {
	tb   testing.TB
	bin  string
	dir  string
	addr string
	args []string // its persistence

	cmd    *exec.Cmd
	exited chan struct{}
}

// StartServer starts a Server without persistence and waits until it
// answers. Without redis-server on PATH the test is skipped, or fails
// when CI=true.
func StartServer(tb testing.TB) *Server {
	tb.Helper()
	return startServer(tb, "--save", "", "--appendonly", "no")
}

// StartDurableServer starts a Server that has every write it
// acknowledges on disk first (appendonly yes, appendfsync always), so
// that what it acknowledged survives Stop and Start, and waits until it
// answers.
func StartDurableServer(tb testing.TB) *Server {
	tb.Helper()
	return startServer(tb, "--save", "", "--appendonly", "yes", "--appendfsync", "always")
}

func startServer(tb testing.TB, args ...string) *Server {
	tb.Helper()
	bin := enginetest.RedisServer(tb)
	s := &Server{tb: tb, bin: bin, dir: tb.TempDir(), addr: ClosedAddr(tb), args: args}
	s.Start()
	tb.Cleanup(func() {
		if s.cmd != nil {
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
	return s
}

// Addr returns the server's address, host:port.
func (s *Server) Addr() string { return s.addr }

// Start starts the server, after StartServer or Stop, and waits until it
// answers.
func (s *Server) Start() {
	tb := s.tb
	tb.Helper()
	_, port, err := net.SplitHostPort(s.addr)
	require.NoError(tb, err)
	logfile := filepath.Join(s.dir, "redis.log")
	args := append([]string{"--bind", "127.0.0.1", "--port", port, "--dir", s.dir, "--logfile", logfile}, s.args...)
	s.cmd = exec.Command(s.bin, args...)
	require.NoError(tb, s.cmd.Start())
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		_ = cmd.Wait()
		close(exited)
	}(s.cmd, s.exited)

	// The client's own dial retries wait for the server quietly; a dial
	// that fails them all is logged by go-redis.
	c := redis.NewClient(&redis.Options{Addr: s.addr})
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
			log, _ := os.ReadFile(logfile)
			tb.Fatalf("redis-server exited at start: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on %s not up after 10 s: %v", s.addr, err)
		}
		time.Sleep(10 * time.Millisecond) // polls for the server
	}
}

// Stop stops the server with SIGTERM, which makes it write what it holds
// and exit, and waits until it did.
func (s *Server) Stop() {
	tb := s.tb
	tb.Helper()
	require.NoError(tb, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		tb.Fatalf("redis-server did not exit within 10 s of SIGTERM")
	}
	s.cmd = nil
}
