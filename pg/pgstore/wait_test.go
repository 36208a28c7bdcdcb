package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// slowPoll makes a Store whose Waits only a notification or a change made
// before them can wake in time.
const slowPoll = time.Hour

// slowPollStore returns a Store on pool in schema that polls slowly,
// closed after t.
func slowPollStore(t *testing.T, pool *pgxpool.Pool, schema string) *pgstore.Store {
	t.Helper()
	s, err := pgstore.New(t.Context(), pool, pgstore.Config{Schema: schema, PollInterval: slowPoll})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// takes checks that a worker on s leases a key of queue promptly after
// change, which it runs once the worker waits.
func takes(t *testing.T, s *pgstore.Store, queue string, change func()) {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- worker(t.Context(), s, queue) }()
	select {
	case err := <-got:
		t.Fatalf("the worker returned before the change: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	change()
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("the worker slept through a change")
	}
}

// TestWaitHearsOtherProcesses: a worker wakes for values that another
// process, with a pool and store of its own, adds.
func TestWaitHearsOtherProcesses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	a := slowPollStore(t, pool, schema)
	b, err := pgstore.New(ctx, connect(t, appName(t)), pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer b.Close()
	takes(t, a, "q", func() { require.NoError(t, b.Add(ctx, "q", "k", vals("1"), store.AddParams{})) })
}

// TestWaitManyWorkersHearOtherProcesses: while several workers of a Store
// wait, each key that another process adds is claimed promptly, by one of
// them, and the others wait on for the next.
func TestWaitManyWorkersHearOtherProcesses(t *testing.T) {
	t.Parallel()
	const workers = 8
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	a := slowPollStore(t, pool, schema)
	b, err := pgstore.New(ctx, connect(t, appName(t)), pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer b.Close()
	done := make(chan error, workers)
	for range workers {
		go func() { done <- worker(ctx, a, "q") }()
	}
	time.Sleep(100 * time.Millisecond) // they wait
	for i := range workers {
		require.NoError(t, b.Add(ctx, "q", fmt.Sprint("k", i), vals("1"), store.AddParams{}))
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatalf("key %d of another process was not claimed", i)
		}
		select {
		case err := <-done:
			t.Fatalf("two workers returned for one key: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestWaitLooksEveryPollInterval: a key that no notification announced
// (written here by hand) wakes a sleeping Wait by the next look of its
// Store's listening connection, at most PollInterval later, or, if that
// look saw it due later, when it is due.
func TestWaitLooksEveryPollInterval(t *testing.T) {
	t.Parallel()
	const every = 500 * time.Millisecond
	ctx := t.Context()
	name := appName(t)
	pool := connect(t, name)
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema, PollInterval: every})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Wait(ctx, "q", time.Millisecond)) // starts the listener
	listenerPID(t, connect(t, appName(t)), name, 0)
	keys := pgx.Identifier{schema, "keys"}.Sanitize()
	for i, in := range []time.Duration{0, 3 * every} {
		q := fmt.Sprint("q", i)
		done := make(chan error, 1)
		go func() { done <- s.Wait(ctx, q, time.Hour) }()
		time.Sleep(100 * time.Millisecond) // it sleeps
		b := time.Now()
		_, err := pool.Exec(ctx, "INSERT INTO "+keys+" (queue, key_hash, key, tail, ready_at) VALUES ($1, sha256('k'), 'k', 1, now() + $2::interval)", q, in)
		require.NoError(t, err)
		select {
		case err := <-done:
			require.NoError(t, err)
			took := time.Since(b)
			require.GreaterOrEqual(t, took, in, "a key due in %v", in)
			require.LessOrEqual(t, took, in+every+time.Second, "a key due in %v", in)
		case <-time.After(in + 5*time.Second):
			t.Fatalf("no look woke the Wait for a key due in %v", in)
		}
	}
}

// TestWaitLongQueueNames: queues whose names pass the notification's
// payload, and share its length of prefix, still wake their workers.
func TestWaitLongQueueNames(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := slowPollStore(t, pool, freshSchema(t, pool))
	prefix := strings.Repeat("ключ", 400) // 3200 bytes
	for _, q := range []string{prefix + "a", prefix + "b"} {
		takes(t, s, q, func() { require.NoError(t, s.Add(ctx, q, "k", vals("1"), store.AddParams{})) })
	}
}

// TestWaitSurvivesLostListener: when the listening connection dies, the
// store listens again on a new one, and notifications wake workers again.
func TestWaitSurvivesLostListener(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	name := appName(t)
	pool := connect(t, name)
	observer := connect(t, appName(t))
	s := slowPollStore(t, pool, freshSchema(t, pool))
	require.NoError(t, s.Wait(ctx, "q", time.Millisecond)) // starts the listener
	first := listenerPID(t, observer, name, 0)
	var killed bool
	require.NoError(t, observer.QueryRow(ctx, "SELECT pg_terminate_backend($1)", first).Scan(&killed))
	require.True(t, killed)
	listenerPID(t, observer, name, first)
	takes(t, s, "q", func() { require.NoError(t, s.Add(ctx, "q", "k", vals("1"), store.AddParams{})) })
}

// TestWaitHearsOwnStoreAtOnce: a Store's change wakes its own Waits in the
// process, without the notification, which here reaches nobody.
func TestWaitHearsOwnStoreAtOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := slowPollStore(t, pool, freshSchema(t, pool))
	require.NoError(t, pgstore.MuteNotifications(s))
	takes(t, s, "q", func() { require.NoError(t, s.Add(ctx, "q", "k", vals("1"), store.AddParams{})) })
}

// listenerPID waits for the listening session of the store whose sessions
// are named name, other than the one of PID not, and returns its PID.
func listenerPID(t *testing.T, observer *pgxpool.Pool, name string, not int32) int32 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var pid int32
		err := observer.QueryRow(t.Context(), `
			SELECT pid FROM pg_stat_activity
			WHERE application_name = $1 AND query LIKE 'LISTEN %' AND pid <> $2`, name, not).Scan(&pid)
		if err == nil {
			return pid
		}
		require.True(t, time.Now().Before(deadline), "no listening session: %v", err)
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCloseEndsWait: Close ends the Waits in progress, and every call after
// it, with store.ErrClosed; closing again does nothing.
func TestCloseEndsWait(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: freshSchema(t, pool), PollInterval: slowPoll})
	require.NoError(t, err)
	waiting := make(chan error, 1)
	go func() {
		for {
			if err := s.Wait(ctx, "q", time.Hour); err != nil {
				waiting <- err
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, s.Close())
	select {
	case err := <-waiting:
		require.ErrorIs(t, err, store.ErrClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a Wait")
	}
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Add(ctx, "q", "k", vals("1"), store.AddParams{}), store.ErrClosed)
	_, _, err = s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.ErrorIs(t, err, store.ErrClosed)
	require.ErrorIs(t, s.Wait(ctx, "q", time.Second), store.ErrClosed)
	_, err = s.Stats(ctx, "q")
	require.ErrorIs(t, err, store.ErrClosed)
}

// TestQueueNameText: a queue name that PostgreSQL's text cannot hold is
// refused, with nothing stored.
func TestQueueNameText(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, connect(t, appName(t)))
	for _, q := range []string{"a\x00b", "\xff"} {
		err := s.Add(ctx, q, "k", vals("1"), store.AddParams{})
		require.ErrorContains(t, err, "pgstore: queue name")
		_, _, err = s.Claim(ctx, q, store.ClaimParams{Keys: 1, TTL: ttl})
		require.ErrorContains(t, err, "pgstore: queue name")
	}
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, s.Add(ctx, "a\x00b", "k", vals("1"), store.AddParams{}), context.Canceled, "a done ctx comes first")
}
