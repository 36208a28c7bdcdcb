package shared

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
)

// goroutineID returns the id of the calling goroutine, from its stack's
// header ("goroutine 7 [running]:").
func goroutineID() uint64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

func newTestCalls() *engineCalls {
	return &engineCalls{clk: timing.From(nil), idle: make(chan func()), quit: make(chan struct{})}
}

// runOn runs a job on c and returns the id of the goroutine it ran on,
// once it ended.
func runOn(c *engineCalls) uint64 {
	ids := make(chan uint64, 1)
	c.run(func() { ids <- goroutineID() })
	return <-ids
}

func TestEngineCallsReuseAGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newTestCalls()
		first := runOn(c)
		synctest.Wait() // the goroutine waits for a job
		if second := runOn(c); second != first {
			t.Fatalf("the job after one that ended ran on goroutine %d, not on %d, whose job ended", second, first)
		}
		c.wait()
		c.stop()
	})
}

func TestEngineCallsIdleGoroutinesExit(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(c *engineCalls)
	}{
		{"after idleFor", func(*engineCalls) { time.Sleep(idleFor) }},
		{"at stop", func(c *engineCalls) { c.stop() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				before := runtime.NumGoroutine()
				c := newTestCalls()
				runOn(c)
				c.wait()
				synctest.Wait()
				if n := runtime.NumGoroutine(); n != before+1 {
					t.Fatalf("%d goroutines once the job ended, want %d: one waiting for the next", n, before+1)
				}
				tc.end(c)
				synctest.Wait()
				if n := runtime.NumGoroutine(); n != before {
					t.Fatalf("%d goroutines, want %d: the waiting one exited", n, before)
				}
				c.stop()
			})
		})
	}
}

func TestEngineCallsWaitForRunningJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newTestCalls()
		runOn(c)
		synctest.Wait()
		release := make(chan struct{})
		done := false
		c.run(func() { <-release; done = true }) // on the waiting goroutine
		c.run(func() {})                         // on a new one
		go func() {
			time.Sleep(time.Millisecond)
			close(release)
		}()
		c.wait()
		if !done {
			t.Fatal("wait returned before a running job ended")
		}
		c.stop()
	})
}

// deep uses about n kB of its goroutine's stack, as a store client's
// call does (a pgx batch, with its encoding and its reads).
//
//go:noinline
func deep(n int) byte {
	var frame [1024]byte
	if n <= 1 {
		return frame[0]
	}
	frame[n%len(frame)] = byte(n)
	return deep(n-1) + frame[(n+1)%len(frame)]
}

// BenchmarkEngineCallsDeepJob runs, one at a time, jobs that use 32 kB of
// stack: on a new goroutine each, the stack grows four times by copying.
func BenchmarkEngineCallsDeepJob(b *testing.B) {
	c := newTestCalls()
	defer c.stop()
	done := make(chan struct{})
	for b.Loop() {
		c.run(func() {
			deep(32)
			done <- struct{}{}
		})
		<-done
	}
	c.wait()
}
