package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/pgstore"
)

// notifications listens on the channel of schema, as the listener of
// another process would, and returns how many notifications came so far,
// after waiting quiet for any still on their way.
func notifications(t *testing.T, schema string) func(quiet time.Duration) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), serverURL())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	_, err = conn.Exec(t.Context(), "LISTEN "+pgx.Identifier{schema + "_changes"}.Sanitize())
	require.NoError(t, err)
	n := 0
	return func(quiet time.Duration) int {
		for {
			ctx, cancel := context.WithTimeout(t.Context(), quiet)
			_, err := conn.WaitForNotification(ctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				require.NoError(t, conn.Ping(t.Context()))
				return n
			}
			require.NoError(t, err)
			n++
		}
	}
}

// Adds and Acks that make a key ready notify only while a Wait sleeps on
// the queue: with none, every process is busy, and the notifications
// would wake nobody. A Wait of another process, and one that begins
// after them, still find the work.
func TestNotifiesOnlyWhileWatched(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s := slowPollStore(t, pool, schema)
	heard := notifications(t, schema)
	const quiet = 100 * time.Millisecond

	// Nobody waits: Add, a lone Ack, a FinishAndClaim and a flight of Acks
	// that each leave a key ready notify nothing.
	for i := range 3 {
		require.NoError(t, s.Add(ctx, "q", "k", vals("a", "b", "c", "d"), store.AddParams{}))
		require.NoError(t, s.Add(ctx, "q", "k2", vals("a"), store.AddParams{}), i)
	}
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	more, next, _, err := s.FinishAndClaim(ctx, ls[0], store.Outcome{Kind: store.Ack}, store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	require.NoError(t, err)
	require.True(t, more)
	require.Len(t, next, 1)
	more, err = s.Finish(ctx, next[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.True(t, more)
	require.Zero(t, heard(quiet), "no Wait sleeps: no notification")

	// A Wait of another process on another queue does not change that.
	other := slowPollStore(t, connect(t, appName(t)), schema)
	waitCtx, stopWait := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		for { // a Wait may wake spuriously: when its listener starts, say
			if err := other.Wait(waitCtx, "elsewhere", time.Hour); err != nil {
				waited <- err
				return
			}
		}
	}()
	time.Sleep(quiet) // the Wait sleeps
	require.NoError(t, s.Add(ctx, "q", "k3", vals("a"), store.AddParams{}))
	require.Zero(t, heard(quiet), "a Wait on another queue: no notification")
	stopWait()
	require.ErrorIs(t, <-waited, context.Canceled)

	// Once a worker of another process waits on the queue, they notify,
	// and it wakes.
	for range 2 {
		drain(t, other, "q")
	}
	takes(t, other, "q", func() { require.NoError(t, s.Add(ctx, "q", "k", vals("x"), store.AddParams{})) })
	require.Equal(t, 1, heard(quiet), "a Wait sleeps: the Add notifies")

	// And its Wait ended: nothing notifies again.
	require.NoError(t, s.Add(ctx, "q", "k4", vals("a"), store.AddParams{}))
	require.Zero(t, heard(quiet)-1, "the Wait ended: no notification")
}

// drain acks every value of queue on s.
func drain(t *testing.T, s *pgstore.Store, queue string) {
	t.Helper()
	for {
		ls, _, err := s.Claim(t.Context(), queue, store.ClaimParams{Keys: 16, TTL: ttl})
		require.NoError(t, err)
		if len(ls) == 0 {
			return
		}
		for _, l := range ls {
			_, err := s.Finish(t.Context(), l, store.Outcome{Kind: store.Ack})
			require.NoError(t, err)
		}
	}
}
