package pacer_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// A delayed value runs at its time, not before; the values of its key
// added after it wait behind it, a batch stops before a value not due,
// and other keys go on meanwhile.
func TestAddAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(nil)
		r := newRunner(t, pacer.Config[string, int]{}, rc)
		stop := start(t, r)
		ctx := t.Context()
		require.NoError(t, r.Add(ctx, "k", 1))
		require.NoError(t, r.AddAfter(ctx, "k", 2, 10*time.Second))
		require.NoError(t, r.Add(ctx, "k", 3))
		require.NoError(t, r.AddAfter(ctx, "k", 4, 5*time.Second)) // due, but behind 2
		require.NoError(t, r.AddAfter(ctx, "other", 5, 3*time.Second))
		require.NoError(t, r.AddAfter(ctx, "now", 6, 0)) // d <= 0 is Add
		synctest.Wait()
		require.Equal(t, []call{{"k", []int{1}, 0, 1}, {"now", []int{6}, 0, 1}}, rc.Calls())
		st := stats(t, r)
		require.Equal(t, 4, st.Queued, "delayed values are queued")
		require.Equal(t, 4, st.Values)
		x, err := r.Explain(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, store.Scheduled, x.State, "k waits for its value 2")
		require.Equal(t, 3, x.Values)
		require.True(t, x.Until.Equal(rc.t0.Add(10*time.Second)), "until %v", x.Until.Sub(rc.t0))
		require.Contains(t, x.String(), "is scheduled")

		time.Sleep(10*time.Second - time.Nanosecond)
		synctest.Wait()
		require.Len(t, rc.Calls(), 3, "only other's value is due")
		require.Equal(t, call{"other", []int{5}, 3 * time.Second, 1}, rc.Calls()[2])
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		require.Equal(t, call{"k", []int{2, 3, 4}, 10 * time.Second, 1}, rc.Calls()[3])
		stop()
		require.False(t, rc.overlap)
		require.Equal(t, uint64(6), stats(t, r).Handled)
		require.Equal(t, 3, rc.count(pacer.EventReady), "ready events: the Adds of 1, 3 and 6")
		require.Equal(t, 6, rc.count(pacer.EventReceived))
	})
}

// AddAt converts its time to a delay on the Runner's clock: with a mock
// clock, a value for a time one minute ahead of it runs when that clock
// has moved a minute on.
func TestAddAtMockClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := clock.NewMock()
		got := make(chan []int, 1)
		r, err := pacer.New(pacer.Config[string, int]{Clock: clk}, func(_ context.Context, _ string, b []int) error {
			got <- b
			return nil
		})
		require.NoError(t, err)
		stop := start(t, r)
		require.NoError(t, r.AddAt(t.Context(), "k", 1, clk.Now().Add(time.Minute)))
		require.NoError(t, r.AddAt(t.Context(), "k", 2, clk.Now().Add(-time.Minute)), "a past time is Add, behind 1")

		clk.Add(59 * time.Second)
		synctest.Wait()
		require.Empty(t, got, "a batch ran before its time")
		clk.Add(time.Second)
		synctest.Wait()
		require.Len(t, got, 1, "the delayed value did not run at its time")
		require.Equal(t, []int{1, 2}, <-got)
		stop()
	})
}

// A debouncing Runner refuses delayed values; a Runner at its bound
// refuses them as Add does, and counts the ones it holds; a Shutdown
// hands the values not due yet, and those behind them, to OnDrop.
func TestAddAfterRefusedAndShutdown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rc := newRecorder(nil)
		deb := newRunner(t, pacer.Config[string, int]{Debounce: time.Second}, rc)
		require.ErrorIs(t, deb.AddAfter(t.Context(), "k", 1, time.Second), pacer.ErrDelayDebounced)
		require.ErrorIs(t, deb.AddAt(t.Context(), "k", 1, time.Now().Add(time.Second)), pacer.ErrDelayDebounced)
		require.NoError(t, deb.AddAfter(t.Context(), "k", 1, 0), "d <= 0 is Add")
		require.ErrorIs(t, deb.AddTxAfter(t.Context(), nil, "k", 1, time.Second), pacer.ErrNoTx)
		require.NoError(t, deb.Shutdown(t.Context()))

		r := newRunner(t, pacer.Config[string, int]{MaxValues: 2}, rc)
		stop := start(t, r)
		require.NoError(t, r.AddAfter(t.Context(), "k", 10, time.Hour))
		require.NoError(t, r.Add(t.Context(), "k", 11))
		require.ErrorIs(t, r.AddAfter(t.Context(), "j", 12, time.Hour), pacer.ErrFull)
		require.Equal(t, uint64(1), stats(t, r).Refused)
		stop()
		require.ErrorIs(t, r.AddAfter(t.Context(), "k", 13, time.Hour), pacer.ErrClosed)
		drops := rc.Drops()
		require.Len(t, drops, 1)
		require.Equal(t, []int{10, 11}, drops[0].Batch)
		require.ErrorIs(t, rc.dropErr[0], pacer.ErrClosed)
		require.Equal(t, []call{{"k", []int{1}, 0, 1}}, rc.Calls(), "the debouncing Runner's Add")
	})
}
