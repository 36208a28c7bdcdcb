package pgstore_test

import (
	"crypto/rand"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// TestMigrateTwice: a second New on a migrated schema changes nothing and
// sees the first one's data.
func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	a, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer a.Close()
	require.NoError(t, a.Add(ctx, "q", "k", [][]byte{[]byte("1")}, store.AddParams{}))
	before := migrated(t, pool, schema)
	require.NotEmpty(t, before)

	b, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer b.Close()
	require.Equal(t, before, migrated(t, pool, schema), "the second New ran migrations again")
	st, err := b.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, 1, st.Values)
}

// TestMigrateConcurrently: Stores made at once on one pool, on a fresh
// schema, all succeed, and the migrations run once (processes:
// TestMigrateFromProcesses).
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
			if err == nil {
				err = s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	vs := migrated(t, pool, schema)
	require.NotEmpty(t, vs)
	seen := map[int32]bool{}
	for _, v := range vs {
		require.False(t, seen[v], "migration %d ran twice", v)
		seen[v] = true
	}
}

// TestMigrateReleasesItsLock: once New migrated a fresh schema, the
// session it took the migration lock on, back in the pool, holds no
// advisory lock: one left there would make every later migration of the
// schema wait for as long as the session lives.
func TestMigrateReleasesItsLock(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	name := appName(t)
	pool := connect(t, name)
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	var sessions, locks int
	require.NoError(t, connect(t, appName(t)).QueryRow(ctx, `
		SELECT count(DISTINCT a.pid), count(l.pid) FROM pg_stat_activity a
		LEFT JOIN pg_locks l ON l.pid = a.pid AND l.locktype = 'advisory'
		WHERE a.application_name = $1`, name).Scan(&sessions, &locks))
	require.Positive(t, sessions, "the pool's sessions")
	require.Zero(t, locks, "advisory locks held by the pool's sessions")
}

// TestMigrateKeepsState: a schema that the first migration made, with
// keys, values and a dead letter in it, keeps them through the later
// migrations: Key and Values show the keys' first values, the keys lease
// in their order with their values, and take more; and it then takes keys
// too long for the first migration's index.
func TestMigrateKeepsState(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	first, err := os.ReadFile("migrations/001_create_tables.sql")
	require.NoError(t, err)
	q := pgx.Identifier{schema}.Sanitize()
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "CREATE SCHEMA "+q+"; SET LOCAL search_path TO "+q+"; "+string(first)+`;
			CREATE TABLE migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
			INSERT INTO migrations (version, name) VALUES (1, '001_create_tables.sql');
			INSERT INTO keys (queue, key, tail, ready_at) VALUES
				('q', 'a', 2, now() - interval '2 seconds'), ('q', 'b', 1, now() - interval '1 second');
			INSERT INTO messages (queue, key, seq, value, added_at) VALUES
				('q', 'a', 0, 'a0', now()), ('q', 'a', 1, 'a1', now()), ('q', 'b', 0, 'b0', now());
			INSERT INTO dead_letters (queue, key, vals, error, attempt, dropped_at) VALUES
				('q', 'd', ARRAY['d0'::bytea], 'x', 1, now())`)
		return err
	})
	require.NoError(t, err)

	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	require.Greater(t, len(migrated(t, pool, schema)), 1)
	// What an operator sees of the keys that the first migration's schema
	// held: their first values, and when those were added.
	for _, key := range []string{"a", "b"} {
		info, ok, err := s.Key(ctx, "q", key)
		require.NoError(t, err)
		require.True(t, ok, key)
		head, err := s.Values(ctx, "q", key, 1)
		require.NoError(t, err)
		require.Len(t, head, 1)
		require.False(t, info.Oldest.IsZero(), key)
		require.True(t, head[0].Added.Equal(info.Oldest), "key %s: oldest %v, head added %v", key, info.Oldest, head[0].Added)
	}
	require.NoError(t, s.Add(ctx, "q", "b", vals("b1"), store.AddParams{}))
	b := make([]byte, 3000)
	_, _ = rand.Read(b)
	long := string(b)
	require.NoError(t, s.Add(ctx, "q", long, vals("l0"), store.AddParams{}))
	ds, err := s.DeadLetters(ctx, "q", 0, 10)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	redriven, err := s.Redrive(ctx, "q", ds[0].ID)
	require.NoError(t, err)
	require.True(t, redriven)

	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 5, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 4)
	for i, want := range []struct {
		key  string
		vals [][]byte
	}{{"a", vals("a0", "a1")}, {"b", vals("b0", "b1")}, {long, vals("l0")}, {"d", vals("d0")}} {
		require.True(t, ls[i].Key == want.key, "lease %d: key %.10q", i, ls[i].Key)
		require.Equal(t, want.vals, ls[i].Values, "values of lease %d", i)
	}
}

// TestSchemasAreSeparate: two schemas on one database share nothing.
func TestSchemasAreSeparate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	a, b := newStore(t, pool), newStore(t, pool)
	require.NoError(t, a.Add(ctx, "q", "k", [][]byte{[]byte("1")}, store.AddParams{}))
	ls, next, err := b.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Empty(t, ls)
	require.Equal(t, store.Never, next)
}

// migrated returns the migrations recorded in schema.
func migrated(t *testing.T, pool *pgxpool.Pool, schema string) []int32 {
	t.Helper()
	rows, err := pool.Query(t.Context(), "SELECT version FROM "+pgx.Identifier{schema}.Sanitize()+".migrations ORDER BY version")
	require.NoError(t, err)
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	require.NoError(t, err)
	return vs
}
