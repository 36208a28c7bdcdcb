package pgstore_test

import (
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/pgstore"
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

// TestMigrateConcurrently: processes that start at once on a fresh schema
// all succeed, and the migrations run once.
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
