package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// An outcome is what a run of the pacer binary wrote and how it exited.
type outcome struct {
	stdout, stderr string
	code           int
}

// runBin runs the binary with args and returns what it wrote and its exit
// status.
func runBin(t *testing.T, args ...string) outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	return outcome{out.String(), errOut.String(), cmd.ProcessState.ExitCode()}
}

// ok runs pacer with args, requires exit status 0 and nothing on stderr,
// and returns its stdout.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	o := runBin(t, args...)
	require.Equal(t, 0, o.code, "pacer %q: stderr %s", args, o.stderr)
	require.Empty(t, o.stderr, "pacer %q", args)
	return o.stdout
}

// An engine is a store the tests seed directly and the flags that name
// the same store to pacer.
type engine struct {
	name  string
	st    store.Store
	flags []string
}

// with returns the engine's flags followed by args.
func (e engine) with(args ...string) []string { return append(append([]string{}, e.flags...), args...) }

// engines are the engines every inspection and action test runs on.
var engines = []func(*testing.T) engine{redisEngine, postgresEngine}

// token returns a random hex string, for names no other test uses.
func token() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// redisEngine returns a redisstore.Store on the test Redis under a prefix
// of its own, whose keys are deleted after t.
func redisEngine(t *testing.T) engine {
	return redisEngineWithPrefix(t, "pacer-cli-test-"+token())
}

func redisEngineWithPrefix(t *testing.T, prefix string) engine {
	t.Helper()
	url := enginetest.RedisURL()
	opt, err := redis.ParseURL(url)
	require.NoError(t, err)
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	if err := c.Ping(t.Context()).Err(); err != nil {
		enginetest.Missing(t, "no Redis at "+url+" ("+err.Error()+"); start one or set PACER_REDIS_URL")
	}
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: prefix})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = s.Close()
		ctx := context.Background()
		iter := c.Scan(ctx, 0, "{"+prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	return engine{"redis", s, []string{"-redis", url, "-redis-prefix", prefix}}
}

// postgresEngine returns a pgstore.Store on the test PostgreSQL in a
// schema of its own, dropped after t.
func postgresEngine(t *testing.T) engine {
	return postgresEngineWithSchema(t, "pacer_cli_test_"+token())
}

func postgresEngineWithSchema(t *testing.T, schema string) engine {
	t.Helper()
	url := enginetest.PostgresURL()
	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	if err := pool.Ping(t.Context()); err != nil {
		enginetest.Missing(t, "no PostgreSQL at "+url+" ("+err.Error()+"); start one or set PACER_POSTGRES_URL")
	}
	s, err := pgstore.New(t.Context(), pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = s.Close()
		_, err := pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		require.NoError(t, err)
	})
	return engine{"postgres", s, []string{"-postgres", url, "-schema", schema}}
}

// onEngines runs test on each engine, as a subtest named after it.
func onEngines(t *testing.T, test func(t *testing.T, e engine)) {
	for _, open := range engines {
		e := open(t)
		t.Run(e.name, func(t *testing.T) { test(t, e) })
	}
}

// jsonOf is v as JSON, to compare with what pacer -json wrote.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// rows returns the lines of a table after its heads, each split on runs
// of two spaces or more (tabwriter's padding), so that cells that hold a
// space ("3s ago (...)") stay whole.
func rows(t *testing.T, table string) [][]string {
	t.Helper()
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	require.NotEmpty(t, lines)
	var out [][]string
	for _, l := range lines[1:] {
		out = append(out, cells(l))
	}
	return out
}

// cells splits a table's line on its padding.
func cells(line string) []string {
	var out []string
	for _, c := range strings.Split(line, "  ") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}
