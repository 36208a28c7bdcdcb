package storetest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// StrictRun is one in-process end-to-end run of a Runner in strict mode
// (MaxBatch 1: one handler call per value) with a no-op handler.
type StrictRun struct {
	Workers         int
	AckInBackground bool
	// Values is how many values the queue holds: the run ends once the
	// handler saw that many.
	Values int
}

// RunStrict works queue q of s as r says, its values decoded as V, until
// the handler saw r.Values values, and returns the time from Run's start
// until then; it then shuts the Runner down (the last Acks land), which
// the time leaves out.
func RunStrict[V any](t testing.TB, s store.Store, q string, r StrictRun) time.Duration {
	t.Helper()
	var handled atomic.Int64
	all := make(chan struct{})
	runner, err := pacer.New(pacer.Config[string, V]{Store: s, Name: q, Workers: r.Workers, MaxBatch: 1, AckInBackground: r.AckInBackground},
		func(_ context.Context, _ string, batch []V) error {
			if handled.Add(int64(len(batch))) == int64(r.Values) {
				close(all)
			}
			return nil
		})
	require.NoError(t, err)
	ctx := context.Background()
	done := make(chan error, 1)
	t0 := time.Now()
	go func() { done <- runner.Run(ctx) }()
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		t.Fatalf("handled %d values of %d in 5 minutes", handled.Load(), r.Values)
	}
	took := time.Since(t0)
	require.NoError(t, runner.Shutdown(ctx))
	require.NoError(t, <-done)
	require.Equal(t, int64(r.Values), handled.Load(), "every value handled once")
	return took
}

// A StrictCase is one workload of the engines' measurements of the strict
// path: StrictValues values over Keys keys, worked by one Runner of
// StrictWorkers workers with a no-op handler.
type StrictCase struct {
	Name       string
	Keys       int
	Background bool // Config.AckInBackground
}

// StrictCases are the workloads every engine's strict-path measurement runs.
var StrictCases = []StrictCase{
	{"500 keys", 500, false},
	{"distinct keys", StrictValues, false},
	{"500 keys, AckInBackground", 500, true},
}

// StrictValues and StrictWorkers size the StrictCases.
const StrictValues, StrictWorkers = 20000, 8
