package local

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// A burst enters its key's queue when it goes quiet, and Ready hears of it
// with its size and the time of its first value; until then it is pending.
func TestDebounce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type ready struct {
			key   string
			n     int
			delay time.Duration
		}
		var got []ready
		e, err := New(Config[string, int]{Debounce: time.Second, Ready: func(key string, n int, first time.Time) {
			got = append(got, ready{key, n, time.Since(first)})
		}})
		require.NoError(t, err)
		defer e.Close()
		ctx := context.Background()
		put(t, e, "a", 1)
		time.Sleep(500 * time.Millisecond)
		put(t, e, "a", 2)
		require.Equal(t, 1, must(e.Gauges(ctx)).Pending)
		require.Zero(t, must(e.Gauges(ctx)).Queued)
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, []ready{{"a", 2, 1500 * time.Millisecond}}, got)
		require.Zero(t, must(e.Gauges(ctx)).Pending)
		l, err := e.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, []int{1, 2}, l.Values)
		require.False(t, must(ack(e, l)))
	})
}

// With MaxValues, Put refuses a value with store.ErrFull while that many
// are held, debouncing or leased; an Ack or a Drop gives their room back.
func TestMaxValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, err := New(Config[string, int]{MaxValues: 2, Debounce: time.Second})
		require.NoError(t, err)
		defer e.Close()
		ctx := context.Background()
		put(t, e, "a", 1, 2)
		require.ErrorIs(t, e.Put(ctx, "b", 3), store.ErrFull, "2 debouncing")
		time.Sleep(2 * time.Second)
		l, err := e.Get(ctx)
		require.NoError(t, err)
		require.ErrorIs(t, e.Put(ctx, "b", 3), store.ErrFull, "2 leased")
		require.False(t, must(drop(e, l)))
		put(t, e, "b", 3, 4)
		require.ErrorIs(t, e.Put(ctx, "b", 5), store.ErrFull)
	})
}

// Drain closes the open bursts at once: into the queue, or with
// DropPending to it. A burst that closes after Close goes to Left.
func TestDrainClosesBursts(t *testing.T) {
	for _, dropPending := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			dropped, left := map[string][]int{}, map[string][]int{}
			cfg := Config[string, int]{Debounce: time.Minute, MaxValues: 10,
				Left: func(key string, vs []int) { left[key] = append(left[key], vs...) }}
			if dropPending {
				cfg.DropPending = func(key string, vs []int) { dropped[key] = append(dropped[key], vs...) }
			}
			e, err := New(cfg)
			require.NoError(t, err)
			ctx := context.Background()
			put(t, e, "a", 1, 2)
			e.Drain()
			require.ErrorIs(t, e.Put(ctx, "b", 3), engine.ErrClosed)
			if dropPending {
				require.Equal(t, map[string][]int{"a": {1, 2}}, dropped)
				require.Zero(t, e.held.Load(), "room given back")
				_, err := e.Get(ctx)
				require.ErrorIs(t, err, engine.ErrClosed, "nothing left")
			} else {
				l, err := e.Get(ctx)
				require.NoError(t, err)
				require.Equal(t, []int{1, 2}, l.Values)
				require.False(t, must(ack(e, l)))
			}
			e.Close()
			require.Empty(t, left)
			require.Zero(t, e.held.Load())
		})
	}

	synctest.Test(t, func(t *testing.T) {
		left := map[string][]int{}
		e, err := New(Config[string, int]{Debounce: time.Minute,
			Left: func(key string, vs []int) { left[key] = append(left[key], vs...) }})
		require.NoError(t, err)
		put(t, e, "a", 1)
		e.g.Close(nil) // the Groups closed while the burst was open
		e.Close()
		require.Equal(t, map[string][]int{"a": {1}}, left)
	})
}

// The engine in the process keeps no dead letters and has no database.
func TestUnsupported(t *testing.T) {
	e, err := New(Config[string, int]{})
	require.NoError(t, err)
	defer e.Close()
	ctx := context.Background()
	require.ErrorIs(t, e.PutTx(ctx, nil, "k", 1), engine.ErrNoTx)
	_, err = e.DeadLetters(ctx, 0, 10)
	require.ErrorIs(t, err, engine.ErrNoDeadLetters)
	_, err = e.Redrive(ctx, 1)
	require.ErrorIs(t, err, engine.ErrNoDeadLetters)
	_, err = e.Purge(ctx, time.Now())
	require.ErrorIs(t, err, engine.ErrNoDeadLetters)
}
