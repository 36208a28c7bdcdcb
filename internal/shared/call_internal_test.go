package shared

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/timing"
)

// A funcCall is a storeCall of funcs.
type funcCall[T any] struct {
	storeCall[T]
	f      func(context.Context) (T, error)
	onLate func(T, error)
}

func (fc *funcCall[T]) call(ctx context.Context) (T, error) { return fc.f(ctx) }

func (fc *funcCall[T]) late(v T, err error) {
	if fc.onLate != nil {
		fc.onLate(v, err)
	}
}

func (fc *funcCall[T]) then(T, error) {}

// callBy makes call as callOn does, under a ctx that carries ctx's values
// but not its cancellation and that ends at deadline; late, if not nil,
// gets the result of a call abandoned at the deadline once it returns.
func callBy[T any](c *engineCalls, k engine.Keeper, ctx context.Context, deadline time.Time, call func(context.Context) (T, error), late func(T, error)) (T, error) {
	fc := &funcCall[T]{f: call, onLate: late}
	fc.init(c, ctx, deadline, fc)
	return callOn(c, k, &fc.storeCall)
}

// A call that does not answer by its deadline is abandoned then: its
// caller gets errNoAnswer, and late the result once the call returns.
func TestCallByAbandonsAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := newEngineCalls(timing.Real{}, 2)
		defer calls.close()
		release := make(chan struct{})
		lateErr := make(chan error, 1)
		t0 := time.Now()
		_, err := callBy(calls, nil, t.Context(), t0.Add(time.Second), func(ctx context.Context) (int, error) {
			<-release // a client that ignores ctx
			return 1, ctx.Err()
		}, func(_ int, err error) { lateErr <- err })
		require.ErrorIs(t, err, errNoAnswer)
		require.Equal(t, time.Second, time.Since(t0))
		close(release)
		calls.wait()
		require.ErrorIs(t, <-lateErr, context.DeadlineExceeded, "the call's ctx ended at the deadline")
	})
}

// A call's ctx carries its caller's values but not its cancellation, and
// a call that answers in time is not abandoned; one that answers as the
// deadline comes goes either to its caller or to late, never to neither.
func TestCallByAnswers(t *testing.T) {
	type key struct{}
	for _, took := range []time.Duration{0, time.Second / 2, time.Second} {
		synctest.Test(t, func(t *testing.T) {
			calls := newEngineCalls(timing.Real{}, 2)
			defer calls.close()
			ctx, cancel := context.WithCancel(context.WithValue(t.Context(), key{}, "v"))
			cancel()
			var late atomic.Int32
			v, err := callBy(calls, nil, ctx, time.Now().Add(time.Second), func(ctx context.Context) (string, error) {
				time.Sleep(took)
				if took < time.Second && ctx.Err() != nil {
					return "", errors.New("cancelled with the caller's ctx")
				}
				return ctx.Value(key{}).(string), nil
			}, func(string, error) { late.Add(1) })
			calls.wait()
			if took < time.Second || err == nil {
				require.NoError(t, err)
				require.Equal(t, "v", v)
				require.Zero(t, late.Load())
				return
			}
			require.ErrorIs(t, err, errNoAnswer)
			require.Equal(t, int32(1), late.Load())
		})
	}
}

// A call's ctx has its deadline, and ends once the call returned. The
// timer of a wait that the call answered in time is kept for the next
// wait, and that of a wait that ended at the deadline is not: the next
// wait lasts until its own deadline.
func TestCallByContextAndTimers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := newEngineCalls(timing.Real{}, 2)
		defer calls.close()
		deadline := time.Now().Add(time.Second)
		var kept context.Context
		_, err := callBy(calls, nil, t.Context(), deadline, func(ctx context.Context) (int, error) {
			kept = ctx
			d, ok := ctx.Deadline()
			require.True(t, ok)
			require.Equal(t, deadline, d)
			require.NoError(t, ctx.Err())
			return 1, nil
		}, nil)
		require.NoError(t, err)
		<-kept.Done()
		require.ErrorIs(t, kept.Err(), context.Canceled)
		require.Equal(t, 1, calls.timers.len(), "the timer of a wait answered in time is kept")

		release := make(chan struct{})
		_, err = callBy(calls, nil, t.Context(), time.Now().Add(time.Second), func(context.Context) (int, error) {
			<-release
			return 2, nil
		}, nil)
		require.ErrorIs(t, err, errNoAnswer)
		require.Zero(t, calls.timers.len(), "the timer that fired is not kept")
		close(release)
		calls.wait()

		t0 := time.Now()
		v, err := callBy(calls, nil, t.Context(), t0.Add(time.Second), func(context.Context) (int, error) {
			time.Sleep(time.Second / 2)
			return 3, nil
		}, nil)
		require.NoError(t, err)
		require.Equal(t, 3, v)
		require.Equal(t, time.Second/2, time.Since(t0))
	})
}
