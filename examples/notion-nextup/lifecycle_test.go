package main

import (
	"context"
	"log/slog"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServeLogsLifecycleAtInfo runs the service for real and stops it: its
// "listening" and "shutting down" lines are routine, so they log at Info,
// not Warn, which operators keep for what needs a look.
func TestServeLogsLifecycleAtInfo(t *testing.T) {
	logs := &recorder{seen: make(chan string, 16)}
	cfg := appConfig{Listen: "127.0.0.1:0", APIURL: "http://tasks.invalid", Rate: 3, Burst: 3, Debounce: time.Second, MaxWait: time.Second, Logger: slog.New(logs)}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg) }()
	for msg := range logs.seen {
		if msg == "listening" {
			break
		}
	}
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, "INFO", logs.level("listening"))
	require.Equal(t, "INFO", logs.level("shutting down"))
}

// A recorder is a slog.Handler that keeps every record's level by message
// and sends each message on seen.
type recorder struct {
	mu     sync.Mutex
	levels map[string]slog.Level
	seen   chan string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	if r.levels == nil {
		r.levels = make(map[string]slog.Level)
	}
	r.levels[rec.Message] = rec.Level
	r.mu.Unlock()
	select {
	case r.seen <- rec.Message:
	default:
	}
	return nil
}

// level returns the level msg was logged at, or "not logged".
func (r *recorder) level(msg string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	lvl, ok := r.levels[msg]
	if !ok {
		return "not logged"
	}
	return lvl.String()
}

// TestHelpExitsZero runs the program with -h: it prints its flags and
// exits 0, as asking for help is not an error; a flag it does not know
// exits 2.
func TestHelpExitsZero(t *testing.T) {
	out, err := program("-h").CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "-api-url")
	require.NotContains(t, string(out), "test.", "only the program's own flags")

	out, err = program("-no-such-flag").CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 2, exit.ExitCode(), "%s", out)
	require.Contains(t, string(out), "no-such-flag")
}
