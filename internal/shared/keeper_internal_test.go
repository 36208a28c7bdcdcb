package shared

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/timing"
)

// armed returns a leaseKeeper whose goroutine has not started, as Keep
// leaves it, counted by calls, with a timer whose stop reports fired.
func armed(calls *engineCalls, fired bool) *leaseKeeper {
	calls.busy.Add(1)
	return &leaseKeeper{calls: calls, timer: stopFunc(func() bool { return !fired })}
}

// An end that comes before the keeper's first renewal is due runs on a
// goroutine of its own, counted by the engine's calls, and the keeper
// never starts: its timer, had it fired late, finds the lease ended.
func TestKeeperEndBeforeStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := newEngineCalls(timing.Real{}, 2)
		defer calls.close()
		k := armed(calls, false)
		var ran atomic.Bool
		require.True(t, k.End(engine.JobFunc(func() { ran.Store(true) })))
		calls.wait()
		require.True(t, ran.Load())

		k.start(func(<-chan engine.Job) { t.Error("the keeper started after the end") })
		synctest.Wait()
		require.False(t, k.End(engine.JobFunc(func() { t.Error("a second end ran") })), "a second end")
	})
}

// An end that comes as the keeper's timer fires, before its goroutine
// started, is handed to that goroutine once it starts, which makes it.
func TestKeeperEndAsTimerFires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := newEngineCalls(timing.Real{}, 2)
		defer calls.close()
		k := armed(calls, true)
		var ran atomic.Bool
		ended := make(chan bool)
		go func() { ended <- k.End(engine.JobFunc(func() { ran.Store(true) })) }()
		synctest.Wait() // End waits for the keeper
		k.start(func(ends <-chan engine.Job) { (<-ends).Run() })
		require.True(t, <-ended)
		calls.wait()
		require.True(t, ran.Load())
	})
}

// An end that comes after the keeper's goroutine returned, having lost
// the lease, is refused.
func TestKeeperEndAfterLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := newEngineCalls(timing.Real{}, 2)
		defer calls.close()
		k := armed(calls, true)
		k.start(func(<-chan engine.Job) {})
		calls.wait()
		require.False(t, k.End(engine.JobFunc(func() { t.Error("an end ran after the loss") })))
	})
}

// The keeper of a lease whose first renewal is due starts then, and not
// before.
func TestKeeperStartsWhenRenewalDue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := newEngineCalls(timing.Real{}, 2)
		defer calls.close()
		calls.busy.Add(1)
		k := &leaseKeeper{calls: calls}
		started := make(chan time.Time, 1)
		t0 := time.Now()
		k.mu.Lock()
		k.timer = stopFunc(timing.AfterFunc(calls.clk, time.Second, func() {
			k.start(func(ends <-chan engine.Job) { started <- time.Now(); (<-ends).Run() })
		}))
		k.mu.Unlock()
		synctest.Wait()
		require.Empty(t, started)
		require.Equal(t, time.Second, (<-started).Sub(t0))
		var ran atomic.Bool
		require.True(t, k.End(engine.JobFunc(func() { ran.Store(true) })))
		calls.wait()
		require.True(t, ran.Load())
	})
}
