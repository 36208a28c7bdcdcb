package shared

import (
	"runtime"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/timing"
)

// Jobs run one after the other go to the goroutine that ran the first,
// each with its own data, exactly once.
func TestEngineCallsReuseGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := newEngineCalls(timing.Real{}, 2)
		defer calls.close()
		before := runtime.NumGoroutine()
		var got []int
		var mu sync.Mutex
		for i := range 100 {
			calls.run(func() {
				mu.Lock()
				got = append(got, i)
				mu.Unlock()
			})
			calls.wait()
			synctest.Wait() // the goroutine waits for the next job
			require.Equal(t, before+1, runtime.NumGoroutine(), "job %d", i)
		}
		want := make([]int, 100)
		for i := range want {
			want[i] = i
		}
		require.Equal(t, want, got)
	})
}

// Jobs that run at once each get a goroutine, however many wait for a job
// already: none waits for another. Then at most maxIdle goroutines wait
// for the next, and close ends them.
func TestEngineCallsConcurrentJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := newEngineCalls(timing.Real{}, 2)
		before := runtime.NumGoroutine()
		const n = 10
		var all sync.WaitGroup
		all.Add(n)
		seen := make([]int, n)
		for i := range n {
			calls.run(func() {
				seen[i]++
				all.Done()
				all.Wait() // returns once every job runs
			})
		}
		calls.wait()
		require.Equal(t, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, seen)
		synctest.Wait()
		require.Equal(t, before+2, runtime.NumGoroutine(), "maxIdle goroutines wait for a job")
		calls.close()
		require.Equal(t, before, runtime.NumGoroutine())
		calls.run(func() { seen[0]++ }) // after close: on a goroutine that then ends
		calls.close()
		require.Equal(t, 2, seen[0])
		require.Equal(t, before, runtime.NumGoroutine())
	})
}
