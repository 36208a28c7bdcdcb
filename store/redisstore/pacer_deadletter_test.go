package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// A pacer Runner on Redis keeps what it drops as dead letters that another
// instance lists, typed, redrives to the key's tail and purges; a dead
// letter whose values no longer decode is listed with its bytes.
func TestRunnerDeadLettersOnRedis(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := t.Context()
	c := newCluster(t, 2, func(_ context.Context, inst int, _ string, batch []int) error {
		if inst == 1 && batch[0] < 0 {
			return pacer.Permanent(errors.New("refused"))
		}
		return nil
	})
	dropped := make(chan struct{}, 2)
	cfg := pacer.Config[string, int]{Store: s, Name: "dead", MaxBatch: 1,
		OnDrop: func(string, []int, error) { dropped <- struct{}{} }}
	r1, err := pacer.New(cfg, c.handler(1))
	require.NoError(t, err)
	start(t, r1)
	require.NoError(t, s.Add(ctx, "dead", "k", [][]byte{[]byte(`"x"`)}, store.AddParams{}))
	require.NoError(t, r1.Add(ctx, "k", -1))
	require.NoError(t, r1.Add(ctx, "k", 2))
	for range 2 {
		select {
		case <-dropped:
		case <-time.After(5 * time.Second):
			t.Fatal("no drop")
		}
	}

	r2, err := pacer.New(cfg, c.handler(2)) // another instance, not running
	require.NoError(t, err)
	// OnDrop runs before the engine keeps the batch: wait for both.
	var dead []pacer.DeadLetter[string, int]
	require.Eventually(t, func() bool {
		dead, err = r2.DeadLetters(ctx, 0, 10)
		require.NoError(t, err)
		return len(dead) == 2
	}, 5*time.Second, time.Millisecond)
	require.ErrorIs(t, dead[0].DecodeErr, pacer.ErrUndecodable)
	require.Equal(t, [][]byte{[]byte(`"x"`)}, dead[0].Raw.Values)
	require.Equal(t, "k", dead[1].Key)
	require.Equal(t, []int{-1}, dead[1].Values)
	require.Equal(t, "permanent: refused", dead[1].Err)
	require.WithinDuration(t, time.Now(), dead[1].At, 5*time.Second)

	// Redriven while r1 still runs, -1 is refused again; r1 stops, so r2,
	// whose handler accepts it, must be the one to take it.
	ctxs, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, r1.Shutdown(ctxs))
	start(t, r2)
	ok, err := r2.Redrive(ctx, dead[1].ID)
	require.NoError(t, err)
	require.True(t, ok)
	c.wait(5 * time.Second)
	c.mu.Lock()
	require.Equal(t, []int{2, -1}, c.done["k"])
	c.mu.Unlock()

	n, err := r2.Purge(ctx, time.Now().Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	dead, err = r2.DeadLetters(ctx, 0, 10)
	require.NoError(t, err)
	require.Empty(t, dead)
}
