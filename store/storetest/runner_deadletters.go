package storetest

import (
	"context"
	"errors"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// testRunnerRetriesAndDeadLetters runs pacer Runners on Harness.Store and
// its Twin, and checks that they retry a failing batch, drop one that
// failed for good or used up its attempts, and keep what they drop as dead
// letters, which another instance lists, typed, redrives to the key's tail
// and purges; a dead letter whose values no longer decode is listed with
// its bytes.
func testRunnerRetriesAndDeadLetters(f *fixture) {
	f.deadLetters() // or skips
	t, s1, s2, q := f.t, f.s, f.twin, f.q
	ctx := t.Context()
	c := newCluster(t, 3, func(ctx context.Context, inst int, _ string, batch []int) error {
		switch {
		case inst == 1 && batch[0] < 0:
			return pacer.Permanent(errors.New("refused"))
		case batch[0] == 2 && pacer.Attempt(ctx) < 3:
			return errors.New("transient")
		case batch[0] == 9:
			return errors.New("never")
		}
		return nil
	})
	dropped := make(chan error, 3)
	cfg := pacer.Config[string, int]{Store: s1, Name: q, MaxBatch: 1,
		Retry:  pacer.Backoff{Initial: 10 * time.Millisecond, Attempts: 3},
		OnDrop: func(_ string, _ []int, err error) { dropped <- err }}
	r1, err := pacer.New(cfg, c.handler(1))
	require.NoError(t, err)
	StartRunner(t, r1)
	require.NoError(t, s1.Add(ctx, q, "k", [][]byte{[]byte(`"x"`)}, store.AddParams{}))
	for _, v := range []int{-1, 2, 9, 4} {
		require.NoError(t, r1.Add(ctx, "k", v))
	}
	for range 3 {
		select {
		case <-dropped:
		case <-time.After(10 * time.Second):
			t.Fatal("no drop")
		}
	}

	cfg.Store = s2
	r2, err := pacer.New(cfg, c.handler(2)) // another instance, not running
	require.NoError(t, err)
	// OnDrop runs before the engine keeps the batch: wait for all three.
	var dead []pacer.DeadLetter[string, int]
	require.Eventually(t, func() bool {
		dead, err = r2.DeadLetters(ctx, 0, 10)
		require.NoError(t, err)
		return len(dead) == 3
	}, 5*time.Second, time.Millisecond)
	require.ErrorIs(t, dead[0].DecodeErr, pacer.ErrUndecodable)
	require.Equal(t, [][]byte{[]byte(`"x"`)}, dead[0].Raw.Values)
	require.Equal(t, "k", dead[1].Key)
	require.Equal(t, []int{-1}, dead[1].Values)
	require.Equal(t, "permanent: refused", dead[1].Err)
	require.Equal(t, 1, dead[1].Attempt)
	require.WithinDuration(t, time.Now(), dead[1].At, 5*time.Second)
	require.Equal(t, []int{9}, dead[2].Values)
	require.Equal(t, "never", dead[2].Err)
	require.Equal(t, 3, dead[2].Attempt)

	// Redriven while r1 still runs, -1 is refused again; r1 stops, so r2,
	// whose handler accepts it, must be the one to take it.
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, r1.Shutdown(stopCtx))
	StartRunner(t, r2)
	ok, err := r2.Redrive(ctx, dead[1].ID)
	require.NoError(t, err)
	require.True(t, ok)
	c.wait(5 * time.Second)
	c.mu.Lock()
	require.Equal(t, []int{2, 4, -1}, c.done["k"], "2 succeeded at its third attempt, in order")
	c.mu.Unlock()

	n, err := r2.Purge(ctx, time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	dead, err = r2.DeadLetters(ctx, 0, 10)
	require.NoError(t, err)
	require.Empty(t, dead)
}
