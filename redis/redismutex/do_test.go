package redismutex_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redismutex"
)

type ctxKey struct{}

func TestDo(t *testing.T) {
	t.Parallel()
	cfg := config(t, 10*time.Second)
	m, other := newLocker(t, cfg), newLocker(t, cfg)
	ctx := context.WithValue(context.Background(), ctxKey{}, "v")

	var fence uint64
	err := m.Do(ctx, "k", func(ctx context.Context) error {
		f, ok := redismutex.FenceFrom(ctx)
		require.True(t, ok)
		fence = f
		require.Equal(t, "v", ctx.Value(ctxKey{}), "fn's ctx carries ctx's values")
		_, err := other.TryLock(ctx, "k")
		require.ErrorIs(t, err, redismutex.ErrLocked, "held while fn runs")
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, uint64(1), fence)
	l, err := other.TryLock(ctx, "k")
	require.NoError(t, err, "released after fn")
	require.Equal(t, uint64(2), l.Fence())
	require.NoError(t, l.Unlock(ctx))

	errFn := errors.New("fn failed")
	require.Equal(t, errFn, m.Do(ctx, "k", func(context.Context) error { return errFn }), "fn's error, as is")
	l, err = other.TryLock(ctx, "k")
	require.NoError(t, err, "released after fn failed")

	// Do waits for the lock.
	done := make(chan error, 1)
	go func() { done <- m.Do(ctx, "k", func(context.Context) error { return nil }) }()
	waitMarked(t, cfg, "k")
	require.NoError(t, l.Unlock(ctx))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Do did not get the lock")
	}
}

func TestDoUnlocksWhenFnPanics(t *testing.T) {
	t.Parallel()
	cfg := config(t, 10*time.Second)
	m, other := newLocker(t, cfg), newLocker(t, cfg)
	ctx := context.Background()
	require.PanicsWithValue(t, "boom", func() {
		_ = m.Do(ctx, "k", func(context.Context) error { panic("boom") })
	})
	l, err := other.TryLock(ctx, "k")
	require.NoError(t, err, "released before the panic went on")
	require.NoError(t, l.Unlock(ctx))
}

func TestDoLockLost(t *testing.T) {
	t.Parallel()
	const ttl = 300 * time.Millisecond
	cfg := config(t, ttl)
	m := newLocker(t, cfg)
	c := client(t)
	ctx := context.Background()
	err := m.Do(ctx, "k", func(ctx context.Context) error {
		require.NoError(t, c.Del(ctx, lockKey(cfg, "k")).Err())
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("fn's ctx did not end when the lock was lost")
		}
		require.ErrorIs(t, context.Cause(ctx), redismutex.ErrLockLost)
		return ctx.Err()
	})
	require.ErrorIs(t, err, redismutex.ErrLockLost)
	require.ErrorIs(t, err, context.Canceled, "fn's error too")

	// fn returning nil does not hide the loss.
	err = m.Do(ctx, "k", func(ctx context.Context) error {
		require.NoError(t, c.Del(ctx, lockKey(cfg, "k")).Err())
		<-ctx.Done()
		return nil
	})
	require.ErrorIs(t, err, redismutex.ErrLockLost)
}

func TestDoCtxEnds(t *testing.T) {
	t.Parallel()
	cfg := config(t, 10*time.Second)
	m, other := newLocker(t, cfg), newLocker(t, cfg)
	errStop := errors.New("stop")
	ctx, cancel := context.WithCancelCause(context.Background())
	err := m.Do(ctx, "k", func(fnCtx context.Context) error {
		cancel(errStop)
		<-fnCtx.Done()
		require.ErrorIs(t, context.Cause(fnCtx), errStop, "ctx's cause")
		return fnCtx.Err()
	})
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, redismutex.ErrLockLost)
	l, err := other.TryLock(context.Background(), "k")
	require.NoError(t, err, "unlocked although ctx ended")
	require.NoError(t, l.Unlock(context.Background()))

	// A Do waiting for a held lock returns when its ctx ends, without
	// calling fn.
	l, err = other.TryLock(context.Background(), "k")
	require.NoError(t, err)
	wctx, wcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer wcancel()
	err = m.Do(wctx, "k", func(context.Context) error {
		t.Error("fn called without the lock")
		return nil
	})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, l.Unlock(context.Background()))
}

// Close ends fn's ctx with cause ErrClosed.
func TestDoClose(t *testing.T) {
	t.Parallel()
	m := newLocker(t, config(t, 10*time.Second))
	err := m.Do(context.Background(), "k", func(ctx context.Context) error {
		require.NoError(t, m.Close())
		<-ctx.Done()
		require.ErrorIs(t, context.Cause(ctx), redismutex.ErrClosed)
		return nil
	})
	require.NoError(t, err, "Unlock still releases the lock after Close")
}
