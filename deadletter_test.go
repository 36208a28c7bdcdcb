package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// A Runner on a store lists the batches it gave up on, typed, pages
// through them, puts one back at its key's tail, where it runs as a new
// value, and purges the ones dropped before a time.
func TestDeadLettersRedriveAndPurge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		var fixed atomic.Bool
		rc := newRecorder(func(_ context.Context, _ string, batch []int) error {
			if batch[0] < 0 && !fixed.Load() {
				return pacer.Permanent(fmt.Errorf("bad %d", batch[0]))
			}
			return nil
		})
		r := newRunner(t, pacer.Config[string, int]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q", MaxBatch: 1}, rc)
		stop := start(t, r)
		defer stop()
		t0 := time.Now()
		require.NoError(t, r.Add(ctx, "a", -1))
		synctest.Wait()
		time.Sleep(time.Minute)
		require.NoError(t, r.Add(ctx, "b", -2))
		require.NoError(t, r.Add(ctx, "a", 3))
		synctest.Wait()

		dead, err := r.DeadLetters(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, dead, 2)
		require.Len(t, rc.Drops(), 2, "OnDrop saw them too")
		a, b := dead[0], dead[1]
		require.Equal(t, "a", a.Key)
		require.Equal(t, []int{-1}, a.Values)
		require.Equal(t, "permanent: bad -1", a.Err)
		require.Equal(t, 1, a.Attempt)
		require.Equal(t, t0, a.At)
		require.NoError(t, a.DecodeErr)
		require.Equal(t, [][]byte{[]byte("-1")}, a.Raw.Values)
		require.Equal(t, "b", b.Key)
		require.Equal(t, []int{-2}, b.Values)
		require.Equal(t, t0.Add(time.Minute), b.At)
		require.Greater(t, b.ID, a.ID)

		page, err := r.DeadLetters(ctx, a.ID, 10)
		require.NoError(t, err)
		require.Equal(t, []uint64{b.ID}, ids(page))

		// Redriven, a's value runs again behind the key's later values.
		fixed.Store(true)
		ok, err := r.Redrive(ctx, a.ID)
		require.NoError(t, err)
		require.True(t, ok)
		synctest.Wait()
		require.Equal(t, []call{{"a", []int{-1}, 0, 1}, {"b", []int{-2}, time.Minute, 1}, {"a", []int{3}, time.Minute, 1}, {"a", []int{-1}, time.Minute, 1}}, rc.Calls())
		ok, err = r.Redrive(ctx, a.ID)
		require.NoError(t, err)
		require.False(t, ok, "a dead letter is redriven once")

		n, err := r.Purge(ctx, t0.Add(time.Minute))
		require.NoError(t, err)
		require.Zero(t, n, "b was dropped at t0+1m, not before")
		n, err = r.Purge(ctx, time.Now().Add(time.Nanosecond))
		require.NoError(t, err)
		require.Equal(t, 1, n)
		dead, err = r.DeadLetters(ctx, 0, 10)
		require.NoError(t, err)
		require.Empty(t, dead)
	})
}

// A dead letter that no longer decodes is listed all the same, with the
// values that decode, the decode error and its bytes as stored.
func TestDeadLettersUndecodable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		mem := store.NewMemory(store.MemoryConfig{})
		raw := [][]byte{[]byte("1"), []byte(`"one"`)}
		require.NoError(t, mem.Add(ctx, "q", "k", raw, store.AddParams{}))
		r := newRunner(t, pacer.Config[string, int]{Store: mem, Name: "q"}, newRecorder(nil))
		start(t, r)()

		dead, err := r.DeadLetters(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, dead, 1)
		require.Equal(t, "k", dead[0].Key)
		require.Equal(t, []int{1}, dead[0].Values)
		require.ErrorIs(t, dead[0].DecodeErr, pacer.ErrUndecodable)
		require.ErrorContains(t, dead[0].DecodeErr, "1 of 2 values, the first at index 1")
		require.Equal(t, raw, dead[0].Raw.Values)
		require.Equal(t, "k", dead[0].Raw.Key)

		// A key that no longer decodes keeps its bytes too.
		ri, err := pacer.New(pacer.Config[int, int]{Store: mem, Name: "q"}, func(context.Context, int, []int) error { return nil })
		require.NoError(t, err)
		dk, err := ri.DeadLetters(ctx, 0, 10)
		require.NoError(t, err)
		require.Len(t, dk, 1)
		require.ErrorIs(t, dk[0].DecodeErr, pacer.ErrUndecodable)
		require.ErrorContains(t, dk[0].DecodeErr, `key "k"`)
		require.Equal(t, "k", dk[0].Raw.Key)
		require.NoError(t, ri.Shutdown(ctx))
	})
}

// bareStore is an engine without dead letters.
type bareStore struct{ store.Store }

// Without a store, or on one that keeps none, the dead-letter calls say
// so rather than returning an empty list.
func TestNoDeadLetters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		for _, cfg := range []pacer.Config[string, int]{
			{},
			{Store: bareStore{store.NewMemory(store.MemoryConfig{})}, Name: "q"},
		} {
			r := newRunner(t, cfg, newRecorder(nil))
			_, err := r.DeadLetters(ctx, 0, 10)
			require.ErrorIs(t, err, pacer.ErrNoDeadLetters)
			_, err = r.Redrive(ctx, 1)
			require.ErrorIs(t, err, pacer.ErrNoDeadLetters)
			_, err = r.Purge(ctx, time.Now())
			require.ErrorIs(t, err, pacer.ErrNoDeadLetters)
			require.NoError(t, r.Shutdown(ctx))
		}
	})
}

// A failing store's error comes back wrapped, not as ErrNoDeadLetters.
func TestDeadLettersStoreError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRunner(t, pacer.Config[string, int]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q"}, newRecorder(nil))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := r.DeadLetters(ctx, 0, 10)
		require.ErrorIs(t, err, context.Canceled)
		require.False(t, errors.Is(err, pacer.ErrNoDeadLetters))
		require.NoError(t, r.Shutdown(t.Context()))
	})
}

func ids[K comparable, V any](ds []pacer.DeadLetter[K, V]) []uint64 {
	out := make([]uint64, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}
