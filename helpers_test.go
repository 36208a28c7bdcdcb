package pacer_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
)

// call is one handler call as a recorder saw it.
type call struct {
	Key     string
	Batch   []int
	At      time.Duration // since the recorder was made, on the bubble's clock
	Attempt int
}

// recorder is a handler that records its calls, notices two calls of one
// key at once, and delegates the outcome to fn.
type recorder struct {
	t0 time.Time
	fn func(ctx context.Context, key string, batch []int) error

	mu      sync.Mutex
	calls   []call
	busy    map[string]bool
	overlap bool
	drops   []call // from OnDrop, At is when
	dropErr []error
	events  []pacer.Event[string]
}

func newRecorder(fn func(ctx context.Context, key string, batch []int) error) *recorder {
	return &recorder{t0: time.Now(), fn: fn, busy: map[string]bool{}}
}

func (rc *recorder) handle(ctx context.Context, key string, batch []int) error {
	rc.mu.Lock()
	if rc.busy[key] {
		rc.overlap = true
	}
	rc.busy[key] = true
	rc.calls = append(rc.calls, call{key, slices.Clone(batch), time.Since(rc.t0), pacer.Attempt(ctx)})
	rc.mu.Unlock()
	defer func() {
		rc.mu.Lock()
		rc.busy[key] = false
		rc.mu.Unlock()
	}()
	if rc.fn == nil {
		return nil
	}
	return rc.fn(ctx, key, batch)
}

func (rc *recorder) onDrop(key string, batch []int, err error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.drops = append(rc.drops, call{Key: key, Batch: slices.Clone(batch), At: time.Since(rc.t0)})
	rc.dropErr = append(rc.dropErr, err)
}

func (rc *recorder) onEvent(e pacer.Event[string]) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.events = append(rc.events, e)
}

func (rc *recorder) Calls() []call {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.calls)
}

func (rc *recorder) Drops() []call {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.drops)
}

func (rc *recorder) count(kind pacer.EventKind) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, e := range rc.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// newRunner builds a Runner whose handler, OnDrop and OnEvent go to rc.
func newRunner(t *testing.T, cfg pacer.Config[string, int], rc *recorder) *pacer.Runner[string, int] {
	t.Helper()
	cfg.OnDrop = rc.onDrop
	cfg.OnEvent = rc.onEvent
	r, err := pacer.New(cfg, rc.handle)
	require.NoError(t, err)
	return r
}

// start runs r in the background inside a synctest bubble and returns a
// function that shuts it down gracefully and checks that Run returned nil.
func start(t *testing.T, r *pacer.Runner[string, int]) (stop func()) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	synctest.Wait() // Run is running before the test goes on
	return func() {
		t.Helper()
		require.NoError(t, r.Shutdown(context.Background()))
		require.NoError(t, <-done)
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// stats returns r.Stats, failing the test on an error.
func stats[K comparable, V any](t testing.TB, r *pacer.Runner[K, V]) pacer.Stats {
	t.Helper()
	st, err := r.Stats(context.Background())
	require.NoError(t, err)
	return st
}
