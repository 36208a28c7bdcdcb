package shared

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/timing"
)

// goroutineID returns the id of the calling goroutine, from its stack's
// first line ("goroutine 7 [running]:").
func goroutineID() uint64 {
	var buf [64]byte
	b := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// Jobs run one after the other go to the goroutine that ran the first,
// each with its own data, exactly once.
func TestEngineCallsReuseGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := newEngineCalls(timing.Real{}, 2)
		defer calls.close()
		var got []int
		ids := map[uint64]bool{}
		for i := range 100 {
			calls.run(engine.JobFunc(func() {
				got = append(got, i)
				ids[goroutineID()] = true
			}))
			calls.wait()
			synctest.Wait() // the goroutine waits for the next job
		}
		want := make([]int, 100)
		for i := range want {
			want[i] = i
		}
		require.Equal(t, want, got)
		require.Len(t, ids, 1, "one goroutine ran them all")
	})
}

// Jobs that run at once each get a goroutine, however many wait for a job
// already: none waits for another. Then at most maxIdle goroutines wait
// for the next, and close ends them (the bubble ends with no goroutine
// left).
func TestEngineCallsConcurrentJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := newEngineCalls(timing.Real{}, 2)
		const n = 10
		var all sync.WaitGroup
		all.Add(n)
		var mu sync.Mutex
		seen := make([]int, n)
		ids := map[uint64]bool{}
		for i := range n {
			calls.run(engine.JobFunc(func() {
				mu.Lock()
				seen[i]++
				ids[goroutineID()] = true
				mu.Unlock()
				all.Done()
				all.Wait() // returns once every job runs
			}))
		}
		calls.wait()
		require.Equal(t, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, seen)
		require.Len(t, ids, n, "a goroutine each")
		synctest.Wait()
		require.Equal(t, int32(2), calls.idle.Load(), "maxIdle goroutines wait for a job")
		calls.close()
		require.Zero(t, calls.idle.Load())
		calls.run(engine.JobFunc(func() { seen[0]++ })) // after close: on a goroutine that then ends
		calls.close()
		require.Equal(t, 2, seen[0])
		require.Zero(t, calls.idle.Load())
	})
}
