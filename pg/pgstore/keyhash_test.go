package pgstore_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// TestKeysWithOneHash: a key whose SHA-256 another key of the queue has is
// never taken for it. No such pair is known, so the test makes key a's
// rows carry the hash of key b while it checks what b's calls do. While a
// has values, the Adds and AddTxs of b fail and change nothing, the
// queue's count of values included, a Redrive of b's dead letter fails and
// keeps it, and Extend, Finish and Release of b find nothing, even with
// a's fence. Once a is done, b is a key again.
func TestKeysWithOneHash(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	claim := func() store.Lease {
		t.Helper()
		ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		return ls[0]
	}
	q := pgx.Identifier{schema}.Sanitize()
	// collide gives a's rows the hash of b, or back their own.
	collide := func(on bool) {
		t.Helper()
		from, to := "a", "b"
		if !on {
			from, to = to, from
		}
		_, err := pool.Exec(ctx, `UPDATE `+q+`.messages SET key_hash = sha256($2) WHERE queue = 'q' AND key_hash = sha256($1)`, from, to)
		require.NoError(t, err)
		_, err = pool.Exec(ctx, `UPDATE `+q+`.keys SET key_hash = sha256($1) WHERE queue = 'q' AND key = 'a'`, to)
		require.NoError(t, err)
	}

	require.NoError(t, s.Add(ctx, "q", "b", vals("b1"), store.AddParams{}))
	_, err = s.Finish(ctx, claim(), store.Outcome{Kind: store.Drop, Err: "x"})
	require.NoError(t, err)
	dead, err := s.DeadLetters(ctx, "q", 0, 10)
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.NoError(t, s.Add(ctx, "q", "a", vals("a1"), store.AddParams{}))
	a := claim()
	require.Equal(t, "a", a.Key)

	// count is the queue's count of values, which bounded Adds read.
	count := func() int64 {
		t.Helper()
		var n int64
		require.NoError(t, pool.QueryRow(ctx, `SELECT sum(n) FROM `+q+`.counts WHERE queue = 'q'`).Scan(&n))
		return n
	}

	collide(true)
	before, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	counted := count()
	require.ErrorContains(t, s.Add(ctx, "q", "b", vals("b2"), store.AddParams{}), "SHA-256")
	require.ErrorContains(t, s.Add(ctx, "q", "b", vals("b2"), store.AddParams{Wait: time.Minute}), "SHA-256")
	require.ErrorContains(t, s.Add(ctx, "q", "b", vals("b2"), store.AddParams{MaxValues: 10}), "SHA-256")
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return s.AddTx(ctx, tx, "q", "b", vals("b2"), store.AddParams{})
	})
	require.ErrorContains(t, err, "SHA-256")
	_, err = s.Redrive(ctx, "q", dead[0].ID)
	require.ErrorContains(t, err, "SHA-256")
	after, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused key changed nothing")
	require.Equal(t, counted, count(), "a refused key counted no value")
	require.Len(t, list(t, s), 1, "the dead letter is kept")
	b := a
	b.Key = "b"
	require.ErrorIs(t, s.Extend(ctx, b, ttl), store.ErrLeaseLost)
	for _, k := range []store.OutcomeKind{store.Ack, store.Drop, store.Retry, store.Hold} {
		_, err := s.Finish(ctx, b, store.Outcome{Kind: k})
		require.ErrorIs(t, err, store.ErrLeaseLost, "Finish of kind %d", k)
	}
	collide(false)
	_, err = s.Finish(ctx, a, store.Outcome{Kind: store.Hold})
	require.NoError(t, err)
	collide(true)
	released, err := s.Release(ctx, "q", "b")
	require.NoError(t, err)
	require.False(t, released, "Release of b released a")
	collide(false)
	released, err = s.Release(ctx, "q", "a")
	require.NoError(t, err)
	require.True(t, released)
	a = claim()
	require.Equal(t, vals("a1"), a.Values, "a's values stay a's")
	more, err := s.Finish(ctx, a, store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.False(t, more)

	require.NoError(t, s.Add(ctx, "q", "b", vals("b2"), store.AddParams{}))
	redriven, err := s.Redrive(ctx, "q", dead[0].ID)
	require.NoError(t, err)
	require.True(t, redriven)
	require.Empty(t, list(t, s))
	b = claim()
	require.Equal(t, "b", b.Key)
	require.Equal(t, vals("b2", "b1"), b.Values)
	require.Equal(t, int64(2), count())
}

// list returns the dead letters of queue q.
func list(t *testing.T, s *pgstore.Store) []store.DeadLetter {
	t.Helper()
	ds, err := s.DeadLetters(t.Context(), "q", 0, 10)
	require.NoError(t, err)
	return ds
}
