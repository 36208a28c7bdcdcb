package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
)

// A graceful Shutdown flushes the pending debounces at once, handles
// everything, drops nothing, and refuses values afterwards.
func TestShutdownDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(func(context.Context, string, []int) error {
			time.Sleep(100 * time.Millisecond)
			return nil
		})
		r := newRunner(t, pacer.Config[string, int]{Debounce: time.Minute, Workers: 2}, rc)
		stop := start(t, r)
		for i := range 100 {
			require.NoError(t, r.Add(t.Context(), fmt.Sprint("k", i%20), i))
		}
		st := stats(t, r)
		require.Equal(t, 20, st.Pending)
		require.Equal(t, uint64(100), st.Received)
		stop()
		var got []int
		for _, c := range rc.Calls() {
			got = append(got, c.Batch...)
			require.Less(t, c.At, time.Minute, "flushed, not debounced")
		}
		require.ElementsMatch(t, seq(0, 100), got)
		require.Len(t, rc.Calls(), 20)
		require.Empty(t, rc.Drops())
		require.ErrorIs(t, r.Add(t.Context(), "k0", 1), pacer.ErrClosed)
		require.Equal(t, pacer.Stats{Debounce: time.Minute, Received: 100, Handled: 100, Batches: 20}, stats(t, r))
		require.NoError(t, r.Shutdown(context.Background()), "idempotent")
	})
}

// A graceful Shutdown waits for a batch whose retry is pending.
func TestShutdownWaitsForRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error {
			if pacer.Attempt(ctx) == 1 {
				return errors.New("transient")
			}
			return nil
		})
		r := newRunner(t, pacer.Config[string, int]{Retry: pacer.Backoff{Initial: 10 * time.Second}}, rc)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "k", 1))
		time.Sleep(time.Second)
		stop()
		require.Equal(t, []call{{"k", []int{1}, 0, 1}, {"k", []int{1}, 10 * time.Second, 2}}, rc.Calls())
		require.Equal(t, 10*time.Second, time.Since(rc.t0))
	})
}

// With DropPendingOnShutdown the bursts still debouncing go to OnDrop.
func TestShutdownDropsPending(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(nil)
		r := newRunner(t, pacer.Config[string, int]{Debounce: time.Second, DropPendingOnShutdown: true}, rc)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "a", 2))
		stop()
		require.Empty(t, rc.Calls())
		require.Equal(t, []call{{Key: "a", Batch: []int{1, 2}}}, rc.Drops())
		require.ErrorIs(t, rc.dropErr[0], pacer.ErrClosed)
	})
}

// Add before Run buffers; Shutdown before Run handles the buffered values
// itself; Run after Shutdown returns ErrClosed.
func TestShutdownBeforeRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(nil)
		r := newRunner(t, pacer.Config[string, int]{MaxBatch: 1}, rc)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "a", 2))
		require.Equal(t, 2, stats(t, r).Queued)
		require.NoError(t, r.Shutdown(context.Background()))
		require.ErrorIs(t, r.Run(context.Background()), pacer.ErrClosed)
		require.Equal(t, []call{{Key: "a", Batch: []int{1}, Attempt: 1}, {Key: "a", Batch: []int{2}, Attempt: 1}}, rc.Calls())
		require.Empty(t, rc.Drops())
	})
}

// A Shutdown that wins the race with `go r.Run(ctx)` still handles
// everything, and the late Run returns ErrClosed.
func TestShutdownRacingRun(t *testing.T) {
	for range 50 {
		synctest.Test(t, func(t *testing.T) {
			rc := newRecorder(nil)
			r := newRunner(t, pacer.Config[string, int]{Workers: 2}, rc)
			for i := range 10 {
				require.NoError(t, r.Add(t.Context(), fmt.Sprint("k", i), i))
			}
			done := make(chan error, 1)
			go func() { done <- r.Run(context.Background()) }()
			require.NoError(t, r.Shutdown(context.Background()))
			if err := <-done; err != nil {
				require.ErrorIs(t, err, pacer.ErrClosed)
			}
			require.Len(t, rc.Calls(), 10)
			require.Empty(t, rc.Drops())
		})
	}
}

// Run may be called only once.
func TestRunTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t, pacer.Config[string, int]{}, newRecorder(nil))
		stop := start(t, r)
		require.ErrorIs(t, r.Run(context.Background()), pacer.ErrRunning)
		stop()
		require.ErrorIs(t, r.Run(context.Background()), pacer.ErrClosed)
	})
}

// A Shutdown whose ctx expires cancels the running handler (cause
// ErrClosed), hands what is left to OnDrop and returns ctx.Err().
func TestShutdownGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cause error
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error {
			<-ctx.Done()
			cause = context.Cause(ctx)
			return ctx.Err()
		})
		r := newRunner(t, pacer.Config[string, int]{Retry: pacer.Backoff{Attempts: 1}}, rc)
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background()) }()
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "b", 2))
		synctest.Wait()

		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := r.Shutdown(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.EqualError(t, err, "pacer: Shutdown gave up, 2 values went to OnDrop: context deadline exceeded")
		require.NoError(t, <-done)
		require.ErrorIs(t, cause, pacer.ErrClosed)
		require.Equal(t, []call{{"a", []int{1}, 0, 1}}, rc.Calls())
		require.ElementsMatch(t, []call{{Key: "a", Batch: []int{1}, At: 5 * time.Second}, {Key: "b", Batch: []int{2}, At: 5 * time.Second}}, rc.Drops())
		for _, err := range rc.dropErr {
			require.ErrorIs(t, err, pacer.ErrClosed)
		}
		require.NoError(t, r.Shutdown(context.Background()))
	})
}

// When Run's ctx ends, Run pauses the Runner and drops nothing: the
// running handler's ctx is cancelled and its batch goes back without using
// an attempt, Add still accepts values, Run returns ctx.Err(), and a later
// Shutdown handles everything, the burst still debouncing included.
func TestRunContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cause error
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error {
			if pacer.Attempt(ctx) == 1 && cause == nil {
				<-ctx.Done()
				cause = context.Cause(ctx)
				return ctx.Err()
			}
			return nil
		})
		r := newRunner(t, pacer.Config[string, int]{Debounce: time.Second, Retry: pacer.Backoff{Attempts: 1}}, rc)
		ctx, cancel := context.WithCancelCause(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		require.NoError(t, r.Add(t.Context(), "a", 1))
		time.Sleep(2 * time.Second)
		require.NoError(t, r.Add(t.Context(), "b", 2)) // still debouncing
		signal := errors.New("SIGTERM")
		cancel(signal)
		require.ErrorIs(t, <-done, context.Canceled)
		require.Equal(t, signal, cause)
		require.NoError(t, r.Add(t.Context(), "c", 3))
		time.Sleep(time.Hour)
		st := stats(t, r)
		require.Equal(t, 3, st.Queued, "a waits, its attempt unused; b and c joined it")
		require.Empty(t, rc.Drops())
		require.Len(t, rc.Calls(), 1)

		require.NoError(t, r.Shutdown(context.Background()))
		require.ElementsMatch(t, []call{
			{"a", []int{1}, time.Second, 1},
			{"a", []int{1}, time.Hour + 2*time.Second, 1},
			{"b", []int{2}, time.Hour + 2*time.Second, 1},
			{"c", []int{3}, time.Hour + 2*time.Second, 1},
		}, rc.Calls())
		require.Empty(t, rc.Drops())
		require.Equal(t, uint64(3), stats(t, r).Handled)
	})
}

// The README's pattern: `go r.Run(ctx)` with a signal ctx, then Shutdown.
// Whether the signal ends Run before Shutdown begins or after, every value
// is handled and nothing is dropped.
func TestShutdownAfterSignal(t *testing.T) {
	for _, signalFirst := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			rc := newRecorder(func(ctx context.Context, _ string, _ []int) error {
				select {
				case <-time.After(time.Second):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			r := newRunner(t, pacer.Config[string, int]{Debounce: time.Minute}, rc)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			synctest.Wait() // Run runs
			for i := range 5 {
				require.NoError(t, r.Add(t.Context(), fmt.Sprint("k", i), i))
			}
			shut := make(chan error, 1)
			if signalFirst {
				cancel()
				require.ErrorIs(t, <-done, context.Canceled)
				go func() { shut <- r.Shutdown(context.Background()) }()
			} else {
				go func() { shut <- r.Shutdown(context.Background()) }()
				time.Sleep(1500 * time.Millisecond) // the drain has begun
				cancel()
				require.NoError(t, <-done, "Run waits for the drain")
			}
			require.NoError(t, <-shut)
			require.Len(t, rc.Calls(), 5)
			require.Empty(t, rc.Drops())
			st := stats(t, r)
			require.Equal(t, uint64(5), st.Handled)
			require.Equal(t, 5*time.Second, time.Since(rc.t0), "one worker, one second per value, none cut short")
		})
	}
}

// A Shutdown that begins while the workers of a Run whose ctx ended are
// still returning waits for them, then drains with its own workers.
func TestShutdownWhileRunStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		cut := map[string]bool{}
		rc := newRecorder(func(ctx context.Context, key string, _ []int) error {
			mu.Lock()
			first := !cut[key]
			cut[key] = true
			mu.Unlock()
			if first {
				<-ctx.Done()
				time.Sleep(time.Second) // slow to give up
				return ctx.Err()
			}
			return nil
		})
		r := newRunner(t, pacer.Config[string, int]{Workers: 2, Retry: pacer.Backoff{Attempts: 1}}, rc)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "b", 2))
		synctest.Wait()
		cancel()
		synctest.Wait() // both handlers are giving up
		require.NoError(t, r.Shutdown(context.Background()))
		require.ErrorIs(t, <-done, context.Canceled)
		require.Empty(t, rc.Drops())
		require.Equal(t, uint64(2), stats(t, r).Handled)
		require.False(t, rc.overlap)
		require.Equal(t, time.Second, time.Since(rc.t0))
	})
}

// After Run returned because its ctx ended, Run may resume the Runner.
func TestRunAgainAfterContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(nil)
		r := newRunner(t, pacer.Config[string, int]{}, rc)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		require.ErrorIs(t, r.Run(ctx), context.Canceled)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		synctest.Wait()
		require.Empty(t, rc.Calls())
		stop := start(t, r)
		synctest.Wait()
		require.Len(t, rc.Calls(), 1)
		stop()
	})
}

// Run reports a completed Shutdown as nil even when its ctx is cancelled
// the moment Shutdown returns.
func TestRunAfterShutdownThenCancel(t *testing.T) {
	for range 200 {
		synctest.Test(t, func(t *testing.T) {
			rc := newRecorder(func(context.Context, string, []int) error { return nil })
			r := newRunner(t, pacer.Config[string, int]{}, rc)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			require.NoError(t, r.Add(t.Context(), "a", 1))
			synctest.Wait()
			require.NoError(t, r.Shutdown(context.Background()))
			cancel()
			require.NoError(t, <-done)
			require.Len(t, rc.Calls(), 1)
		})
	}
}

// A graceful Shutdown does not wait for held keys; their values go to
// OnDrop with ErrClosed.
func TestShutdownReportsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(func(context.Context, string, []int) error { return errors.New("down") })
		r := newRunner(t, pacer.Config[string, int]{MaxBatch: 1, Retry: pacer.Backoff{Attempts: 1}, Exhausted: pacer.ExhaustedHold}, rc)
		stop := start(t, r)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "a", 2))
		synctest.Wait()
		require.Equal(t, 1, stats(t, r).Held)
		stop()
		require.Equal(t, []call{{Key: "a", Batch: []int{1}}, {Key: "a", Batch: []int{2}}}, rc.Drops())
		require.ErrorIs(t, rc.dropErr[0], pacer.ErrClosed)
	})
}

// A value that Add refuses because a Shutdown began during the call is
// neither counted nor reported as received; one it accepts is handled.
func TestAddRacingShutdown(t *testing.T) {
	for _, debounce := range []time.Duration{0, time.Second} {
		synctest.Test(t, func(t *testing.T) {
			var r *pacer.Runner[string, int]
			received := 0
			cfg := pacer.Config[string, int]{Debounce: debounce, OnEvent: func(e pacer.Event[string]) {
				if e.Kind != pacer.EventReceived {
					return
				}
				received++
				if received == 1 {
					go func() { _ = r.Shutdown(context.Background()) }()
					synctest.Wait() // the Shutdown is over
				}
			}}
			var handled []int
			r, err := pacer.New(cfg, func(_ context.Context, _ string, batch []int) error {
				handled = append(handled, batch...)
				return nil
			})
			require.NoError(t, err)
			err = r.Add(t.Context(), "a", 1)
			st := stats(t, r)
			if err != nil {
				require.ErrorIs(t, err, pacer.ErrClosed)
				require.Zero(t, st.Received, "refused, not received")
				require.Zero(t, received, "refused, not reported")
				return
			}
			require.Equal(t, []int{1}, handled)
			require.Equal(t, pacer.Stats{Debounce: debounce, Received: 1, Handled: 1, Batches: 1}, st)
			require.Equal(t, 1, received)
		})
	}
}

// A second Shutdown whose ctx expires stops the Runner at once even when it
// comes before the first Shutdown, called before Run, started the workers:
// they handle nothing, and what is left goes to OnDrop.
func TestShutdownGivesUpBeforeWorkersStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		flushing, resume := make(chan struct{}), make(chan struct{})
		rc := newRecorder(func(ctx context.Context, _ string, _ []int) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Hour):
				return nil
			}
		})
		cfg := pacer.Config[string, int]{Debounce: time.Second, OnDrop: rc.onDrop, OnEvent: func(e pacer.Event[string]) {
			if e.Kind == pacer.EventReady { // the first Shutdown flushes
				close(flushing)
				<-resume
			}
		}}
		r, err := pacer.New(cfg, rc.handle)
		require.NoError(t, err)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		first := make(chan error, 1)
		go func() { first <- r.Shutdown(context.Background()) }()
		<-flushing
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		second := make(chan error, 1)
		go func() { second <- r.Shutdown(ctx) }()
		synctest.Wait()
		close(resume)
		require.ErrorIs(t, <-second, context.Canceled)
		require.NoError(t, <-first)
		require.Zero(t, time.Since(rc.t0), "stopped at once")
		require.Empty(t, rc.Calls())
		require.Equal(t, []call{{Key: "a", Batch: []int{1}}}, rc.Drops())
		require.ErrorIs(t, rc.dropErr[0], pacer.ErrClosed)
	})
}
