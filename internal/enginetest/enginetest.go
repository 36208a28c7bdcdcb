// Package enginetest holds what the tests of the store engines, and of the
// programs that run on them, share: where the test servers are, and what a
// test does when one is missing.
//
// Engine tests run against real servers. Where a server is missing they
// skip with one line saying how to provide it, so that `go test ./...`
// works on any machine; under CI (the environment variable CI=true) they
// fail instead, because there the engines must be tested.
package enginetest

import (
	"os"
	"os/exec"
	"testing"
)

// RedisURL is the Redis the tests use: PACER_REDIS_URL, or a local one.
func RedisURL() string { return env("PACER_REDIS_URL", "redis://127.0.0.1:6379/0") }

// PostgresURL is the PostgreSQL the tests use: PACER_POSTGRES_URL, or a
// local one.
func PostgresURL() string {
	return env("PACER_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Missing ends tb because something it needs is not there, with msg saying
// what and how to provide it: it fails under CI and skips elsewhere.
func Missing(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg)
	}
	tb.Skip(msg)
}

// RedisServer returns the path of the redis-server program, for a test
// that starts a server of its own; without one it ends tb as Missing does.
func RedisServer(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		Missing(tb, "redis-server is not installed ("+err.Error()+"): install Redis to run this test")
	}
	return bin
}
