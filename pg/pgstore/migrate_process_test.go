//go:build unix

package pgstore_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
)

// migrateChildEnv holds, as JSON, the migrateChild of a test binary
// re-executed to be one process of TestMigrateFromProcesses.
const migrateChildEnv = "PACER_PGSTORE_MIGRATE_CHILD"

// migrateChild configures one process: a service that creates a table of
// its own, then a Store.
type migrateChild struct {
	URL    string
	Schema string // the Store's
	Table  string // the service's own table, quoted
}

// TestMigrateChildHelper is not a test: re-executed by
// TestMigrateFromProcesses with migrateChildEnv set, it starts as a
// service with an outbox does: it runs a CREATE TABLE IF NOT EXISTS of its
// own on its pool, writes "ready" on stdout, waits until the barrier on
// file descriptor 3 closes, and then calls pgstore.New.
func TestMigrateChildHelper(t *testing.T) {
	raw := os.Getenv(migrateChildEnv)
	if raw == "" {
		t.Skip("child process of TestMigrateFromProcesses")
	}
	var cfg migrateChild
	require.NoError(t, json.Unmarshal([]byte(raw), &cfg))
	ctx := t.Context()
	pool, err := pgxpool.New(ctx, cfg.URL)
	require.NoError(t, err)
	defer pool.Close()
	_, err = pool.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+cfg.Table+" (id bigint PRIMARY KEY, body bytea)")
	require.NoError(t, err)
	_, _ = os.Stdout.WriteString("ready\n")
	barrier := os.NewFile(3, "barrier")
	_, _ = io.Copy(io.Discard, barrier)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: cfg.Schema})
	require.NoError(t, err)
	require.NoError(t, s.Close())
}

// TestMigrateFromProcesses: OS processes that start at once on a fresh
// schema, each with a pool that first ran a CREATE TABLE IF NOT EXISTS of
// the service's own, all succeed, and the migrations run once; over
// several fresh schemas.
func TestMigrateFromProcesses(t *testing.T) {
	t.Parallel()
	const rounds, procs = 3, 5
	ctx := t.Context()
	pool := connect(t, appName(t))
	for range rounds {
		schema, app := freshSchema(t, pool), freshSchema(t, pool)
		cfg := migrateChild{URL: serverURL(), Schema: schema, Table: pgx.Identifier{app, "events"}.Sanitize()}
		_, err := pool.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{app}.Sanitize()+"; CREATE TABLE "+cfg.Table+" (id bigint PRIMARY KEY, body bytea)")
		require.NoError(t, err)
		startTogether(t, cfg, procs)
		vs := migrated(t, pool, schema)
		require.NotEmpty(t, vs)
		seen := map[int32]bool{}
		for _, v := range vs {
			require.False(t, seen[v], "migration %d ran twice", v)
			seen[v] = true
		}
	}
}

// A migrateProc is a running TestMigrateChildHelper.
type migrateProc struct {
	cmd   *exec.Cmd
	out   bytes.Buffer  // its stdout but "ready", once done is closed
	err   bytes.Buffer  // its stderr, once done is closed
	ready chan struct{} // closed once it waits at the barrier
	done  chan struct{} // closed once it exited
}

// startTogether runs n processes of cfg, releases them at once when all
// are ready by closing the pipe they read as a barrier, and checks that
// each exits with success.
func startTogether(t *testing.T, cfg migrateChild, n int) {
	t.Helper()
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	barrier, release, err := os.Pipe()
	require.NoError(t, err)
	defer release.Close()
	ps := make([]*migrateProc, n)
	for i := range ps {
		p := &migrateProc{ready: make(chan struct{}), done: make(chan struct{})}
		p.cmd = exec.Command(os.Args[0], "-test.run=^TestMigrateChildHelper$", "-test.count=1")
		p.cmd.Env = append(os.Environ(), migrateChildEnv+"="+string(raw))
		p.cmd.ExtraFiles = []*os.File{barrier}
		p.cmd.Stderr = &p.err
		stdout, err := p.cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, p.cmd.Start())
		t.Cleanup(func() {
			_ = p.cmd.Process.Kill()
			<-p.done
		})
		go func() {
			defer close(p.done)
			lines := bufio.NewScanner(stdout)
			for lines.Scan() {
				if lines.Text() == "ready" {
					close(p.ready)
					continue
				}
				p.out.WriteString(lines.Text() + "\n")
			}
			_ = p.cmd.Wait()
		}()
		ps[i] = p
	}
	require.NoError(t, barrier.Close()) // the children hold it open
	for _, p := range ps {
		select {
		case <-p.ready:
		case <-p.done:
			t.Fatalf("a process exited before it was ready:\n%s%s", p.out.String(), p.err.String())
		case <-time.After(time.Minute):
			t.Fatal("a process was not ready within a minute")
		}
	}
	require.NoError(t, release.Close())
	for _, p := range ps {
		<-p.done
		require.Zero(t, p.cmd.ProcessState.ExitCode(), "a process failed:\n%s%s", p.out.String(), p.err.String())
	}
}
