package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// vals turns strings into values.
func vals(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// TestAddTxRolledBack: values added in a transaction that rolls back were
// never added, whether their key was new or leased.
func TestAddTxRolledBack(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	require.NoError(t, s.Add(ctx, "q", "leased", vals("1"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	before, err := s.Stats(ctx, "q")
	require.NoError(t, err)

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	require.NoError(t, s.AddTx(ctx, tx, "q", "new", vals("a", "b"), store.AddParams{}))
	require.NoError(t, s.AddTx(ctx, tx, "q", "leased", vals("2"), store.AddParams{Wait: time.Minute}))
	require.NoError(t, tx.Rollback(ctx))

	after, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, before, after)
	more, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.False(t, more, "a rolled back value came behind the lease")
	ls, next, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 2, TTL: ttl})
	require.NoError(t, err)
	require.Empty(t, ls)
	require.Equal(t, store.Never, next)
}

// TestAddTxCommitted: values added in a transaction, with the caller's own
// row, exist once it commits, and not before.
func TestAddTxCommitted(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	mine := pgx.Identifier{freshSchema(t, pool)}.Sanitize()
	events := mine + ".events"
	_, err := pool.Exec(ctx, "CREATE SCHEMA "+mine)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, "CREATE TABLE "+events+" (id int PRIMARY KEY)")
	require.NoError(t, err)

	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO "+events+" (id) VALUES (1)"); err != nil {
			return err
		}
		if err := s.AddTx(ctx, tx, "q", "k", vals("e1"), store.AddParams{}); err != nil {
			return err
		}
		ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
		require.NoError(t, err)
		require.Empty(t, ls, "a value of a transaction that did not commit yet was leased")
		return nil
	})
	require.NoError(t, err)

	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, "k", ls[0].Key)
	require.Equal(t, vals("e1"), ls[0].Values)
	var n int
	require.NoError(t, pool.QueryRow(ctx, "SELECT count(*) FROM "+events).Scan(&n))
	require.Equal(t, 1, n)
}

// TestAddTxWakesWaitAtCommit: a worker waiting on the queue takes values
// added in a transaction as soon as it commits: the store's poll is far too
// slow to be what woke it.
func TestAddTxWakesWaitAtCommit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: freshSchema(t, pool), PollInterval: time.Hour})
	require.NoError(t, err)
	defer s.Close()

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	require.NoError(t, s.AddTx(ctx, tx, "q", "k", vals("1"), store.AddParams{}))
	got := make(chan error, 1)
	go func() { got <- worker(ctx, s, "q") }()
	select {
	case err := <-got:
		t.Fatalf("the worker returned before the commit: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	committed := time.Now()
	require.NoError(t, tx.Commit(ctx))
	select {
	case err := <-got:
		require.NoError(t, err)
		t.Logf("leased %v after the commit", time.Since(committed))
	case <-time.After(5 * time.Second):
		t.Fatal("the worker slept through a commit")
	}
}

// worker claims from queue, waiting with the store's Wait in between, until
// it leases a key, which it acks.
func worker(ctx context.Context, s *pgstore.Store, queue string) error {
	for {
		ls, next, err := s.Claim(ctx, queue, store.ClaimParams{Keys: 1, TTL: ttl})
		if err != nil {
			return err
		}
		if len(ls) > 0 {
			_, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
			return err
		}
		if err := s.Wait(ctx, queue, next); err != nil {
			return err
		}
	}
}

// TestFinishWaitsForAddTx: an open transaction that added to a leased key
// holds the key's row; the holder's Finish waits for it and then sees its
// values behind the lease.
func TestFinishWaitsForAddTx(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	require.NoError(t, s.Add(ctx, "q", "k", vals("1", "2"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 1)

	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	require.NoError(t, s.AddTx(ctx, tx, "q", "k", vals("3"), store.AddParams{}))
	type result struct {
		more bool
		err  error
	}
	done := make(chan result, 1)
	go func() {
		more, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
		done <- result{more, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("Finish did not wait for the transaction: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	require.NoError(t, tx.Commit(ctx))
	r := <-done
	require.NoError(t, r.err)
	require.True(t, r.more)
	ls, _, err = s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, vals("3"), ls[0].Values)
}

// TestAddTxMisuse: AddTx refuses what is not a pgx.Tx, naming its type,
// and a closed store.
func TestAddTxMisuse(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	require.ErrorContains(t, s.AddTx(ctx, nil, "q", "k", vals("1"), store.AddParams{}), "pgstore: AddTx needs a pgx.Tx, got <nil>")
	require.ErrorContains(t, s.AddTx(ctx, pool, "q", "k", vals("1"), store.AddParams{}), "pgstore: AddTx needs a pgx.Tx, got *pgxpool.Pool")
	require.NoError(t, s.Close())
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return s.AddTx(ctx, tx, "q", "k", vals("1"), store.AddParams{})
	})
	require.ErrorIs(t, err, store.ErrClosed)
}
