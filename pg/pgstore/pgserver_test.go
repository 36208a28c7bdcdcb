//go:build unix

package pgstore_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
)

// pgServer is a PostgreSQL server of a test's own: a data directory made
// by initdb and a postgres process on a spare port of 127.0.0.1, with
// trust authentication, that the test stops and starts again. It runs as
// the test's user, or, when the test runs as root, whom PostgreSQL
// refuses to run as, as the postgres user (or nobody).
type pgServer struct {
	t    *testing.T
	bin  string // the directory of initdb and postgres
	dir  string // the data directory
	log  string // the server's output
	port int
	cred *syscall.Credential // nil: the test's own user
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd exited
	set  []string      // settings of the test's own, as name=value
}

// startPGServer makes a data directory and starts a server on it, with
// settings (name=value) besides the usual ones, stopped when t ends.
// Without PostgreSQL's programs it ends t as enginetest.Missing does.
func startPGServer(t *testing.T, settings ...string) *pgServer {
	t.Helper()
	bin := postgresBin(t)
	srv := &pgServer{t: t, bin: bin, set: settings}
	if os.Geteuid() == 0 {
		srv.cred = unprivileged(t)
	}
	// Not t.TempDir: its parent is private to the test's user, whom the
	// server may not run as; nor $TMPDIR then, which may be private too.
	parent := ""
	if srv.cred != nil {
		parent = "/tmp"
	}
	base, err := os.MkdirTemp(parent, "pgstore-server-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	if srv.cred != nil {
		require.NoError(t, os.Chown(base, int(srv.cred.Uid), int(srv.cred.Gid)))
	}
	srv.dir, srv.log = filepath.Join(base, "data"), filepath.Join(base, "server.log")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", srv.dir, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: srv.cred}
	out, err := initdb.CombinedOutput()
	require.NoError(t, err, "initdb: %s", out)
	srv.port = sparePort(t)
	srv.start()
	t.Cleanup(func() {
		if srv.running() {
			srv.stop(syscall.SIGQUIT)
		}
		if t.Failed() {
			if b, err := os.ReadFile(srv.log); err == nil {
				t.Logf("the server's log:\n%s", b)
			}
		}
	})
	return srv
}

// url is the server's URL, for its database postgres.
func (s *pgServer) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// start starts the server on its data directory and port, and waits until
// it takes connections.
func (s *pgServer) start() {
	s.t.Helper()
	logf, err := os.OpenFile(s.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	require.NoError(s.t, err)
	defer logf.Close()
	if s.cred != nil {
		require.NoError(s.t, os.Chown(s.log, int(s.cred.Uid), int(s.cred.Gid)))
	}
	args := []string{"-D", s.dir, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "fsync=on", "-c", "synchronous_commit=on", "-c", "max_connections=40"}
	for _, kv := range s.set {
		args = append(args, "-c", kv)
	}
	s.cmd = exec.Command(filepath.Join(s.bin, "postgres"), args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	require.NoError(s.t, s.cmd.Start())
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(s.cmd, s.done)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.url())
		if err == nil {
			_ = conn.Close(ctx)
			cancel()
			return
		}
		cancel()
		select {
		case <-s.done:
			s.t.Fatalf("postgres exited at start: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("postgres takes no connections after 30 s: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop stops the server with sig, SIGINT for PostgreSQL's fast shutdown
// or SIGQUIT for its immediate one (a crash, as far as the data goes: the
// next start recovers from the WAL), and waits until it exited.
func (s *pgServer) stop(sig syscall.Signal) {
	s.t.Helper()
	require.NoError(s.t, s.cmd.Process.Signal(sig))
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		s.t.Fatalf("postgres did not stop in 30 s on %v", sig)
	}
}

func (s *pgServer) running() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// postgresBin returns the directory of PostgreSQL's server programs: the
// one of postgres on the PATH, or of the newest version installed the
// Debian way, under /usr/lib/postgresql.
func postgresBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("postgres"); err == nil {
		if _, err := exec.LookPath(filepath.Join(filepath.Dir(p), "initdb")); err == nil {
			return filepath.Dir(p)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	enginetest.Missing(t, "pgstore: PostgreSQL's server programs (postgres, initdb) are not installed: install PostgreSQL to run this test")
	return ""
}

// version is the major version in a path /usr/lib/postgresql/N/bin.
func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// unprivileged returns the credentials the server runs under when the
// test runs as root: the postgres user's, or nobody's.
func unprivileged(t *testing.T) *syscall.Credential {
	t.Helper()
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		}
	}
	enginetest.Missing(t, "pgstore: the test runs as root, which PostgreSQL refuses, and there is no postgres or nobody user to run the server as")
	return nil
}

// sparePort returns a TCP port of 127.0.0.1 that nothing listens on.
func sparePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
