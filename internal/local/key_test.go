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

// keyInfo returns what e says of key, failing on an error.
func keyInfo[V any](t *testing.T, e engine.Engine[string, V], key string) engine.KeyState {
	t.Helper()
	st, err := e.Key(context.Background(), key)
	require.NoError(t, err)
	require.False(t, st.QueuePaused, "the queue in the process is never paused")
	return st
}

// Key follows a key through every state: debouncing, ready with keys
// ahead, leased, retrying with its error, deferred, held since the hold,
// and gone once its values are.
func TestKeyStates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e, err := New(Config[string, int]{MaxBatch: 1, Debounce: time.Second, MaxWait: 1500 * time.Millisecond})
		require.NoError(t, err)
		defer e.Close()
		t0 := time.Now()

		require.Equal(t, engine.KeyState{}, keyInfo(t, e, "a"), "no values")
		put(t, e, "b", 1)
		put(t, e, "a", 1)
		time.Sleep(800 * time.Millisecond)
		put(t, e, "a", 2)
		require.Equal(t, engine.KeyState{Found: true, Info: store.KeyInfo{
			State: store.Debouncing, Until: t0.Add(1500 * time.Millisecond), MaxWait: true, Values: 2, Oldest: t0,
		}}, keyInfo(t, e, "a"))

		time.Sleep(time.Second)
		synctest.Wait() // both bursts closed: b first
		require.Equal(t, store.KeyInfo{State: store.Ready, Values: 2, Ahead: 1}, keyInfo(t, e, "a").Info)

		lb, err := e.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, "b", lb.Key)
		la, err := e.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, store.KeyInfo{State: store.Leased, Values: 2, Attempt: 1}, keyInfo(t, e, "a").Info)
		put(t, e, "a", 3) // opens a burst behind the lease: counted
		require.Equal(t, store.KeyInfo{State: store.Leased, Values: 3, Attempt: 1}, keyInfo(t, e, "a").Info)

		t1 := time.Now()
		_, err = e.Finish(ctx, la, store.Outcome{Kind: store.Retry, After: 5 * time.Second, Err: "503 from api"})
		require.NoError(t, err)
		require.Equal(t, store.KeyInfo{State: store.Retrying, Until: t1.Add(5 * time.Second), Values: 3, Attempt: 1, Err: "503 from api"},
			keyInfo(t, e, "a").Info)

		_, err = e.Finish(ctx, lb, store.Outcome{Kind: store.Defer, After: time.Minute})
		require.NoError(t, err)
		require.Equal(t, store.KeyInfo{State: store.Deferred, Until: t1.Add(time.Minute), Values: 1, Attempt: 1},
			keyInfo(t, e, "b").Info, "a deferral without an error before")

		time.Sleep(5 * time.Second)
		synctest.Wait() // a's retry is due, and its burst closed
		la, err = e.Get(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, la.Attempt)
		require.Equal(t, store.KeyInfo{State: store.Leased, Values: 3, Attempt: 2, Err: "503 from api"},
			keyInfo(t, e, "a").Info, "the error stays with the batch")
		t2 := time.Now()
		_, err = e.Finish(ctx, la, store.Outcome{Kind: store.Hold, Err: "gave up"})
		require.NoError(t, err)
		require.Equal(t, store.KeyInfo{State: store.Held, Since: t2, Values: 3, Attempt: 2, Err: "gave up"}, keyInfo(t, e, "a").Info)

		time.Sleep(time.Second)
		require.True(t, must(e.Release(ctx, "a")))
		require.Equal(t, store.KeyInfo{State: store.Ready, Values: 3}, keyInfo(t, e, "a").Info, "released: the error is gone")
		la, err = e.Get(ctx) // b is deferred: a is the only ready key
		require.NoError(t, err)
		_, err = e.Finish(ctx, la, store.Outcome{Kind: store.Retry, Err: "again"})
		require.NoError(t, err)
		require.Equal(t, "again", keyInfo(t, e, "a").Info.Err)
		la, err = e.Get(ctx)
		require.NoError(t, err)
		_, err = ack(e, la)
		require.NoError(t, err)
		require.Empty(t, keyInfo(t, e, "a").Info.Err, "acked: the error is gone")
		require.Zero(t, e.noted.Load(), "no note is left once the batches that had one ended")
	})
}

// Ahead is counted up to store.MaxAhead.
func TestKeyAheadBound(t *testing.T) {
	e := newEngine(t, 0, nil)
	defer e.Close()
	for i := range store.MaxAhead + 5 {
		put(t, e, string(rune('A'+i%26))+string(rune(i)), i)
	}
	put(t, e, "last", 0)
	require.Equal(t, store.MaxAhead, keyInfo(t, e, "last").Info.Ahead)
}

// The Carrying engine shows its keys as the Engine does.
func TestCarryingKey(t *testing.T) {
	c, err := NewCarrying(Config[string, int]{}, func(context.Context) []byte { return []byte("tc") })
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Put(context.Background(), "a", 1))
	require.NoError(t, c.Put(context.Background(), "b", 2))
	require.Equal(t, engine.KeyState{Found: true, Info: store.KeyInfo{State: store.Ready, Values: 1, Ahead: 1}}, keyInfo(t, c, "b"))
}
