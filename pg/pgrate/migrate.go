package pgrate

import (
	"context"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The migrations, numbered by the digits before the first "_" of their
// names; each runs once per schema, in order. They follow pgstore's
// habits, with tables of their own (rate_migrations, rate_buckets), so a
// schema shared with a pgstore.Store by mistake still works.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// A migration is one numbered step of the schema.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order.
var migrations = sync.OnceValues(func() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		digits, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(digits)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("pgrate: migration %s is not numbered", base)
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("pgrate: migrations %s and %s share a number", ms[i-1].name, ms[i].name)
		}
	}
	return ms, nil
})

// migrate brings schema, quoted, up to the last migration. A schema that
// is up to date costs one query and needs no privilege beyond reading it.
// Otherwise, on a connection of its own, it takes the schema's migration
// lock (withMigrationLock) and then, in one transaction, creates the
// schema if needed, runs the migrations it has not run yet with
// search_path set to it, and records them in rate_migrations.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	last := ms[len(ms)-1].version
	var have int
	err = pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+schema+".rate_migrations").Scan(&have)
	if err == nil && have >= last {
		return nil
	}
	// Otherwise the schema is missing or behind: the transaction finds out.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release() // or destroyed, if withMigrationLock closed it
	return withMigrationLock(ctx, conn.Conn(), schema, func() error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { return runMigrations(ctx, tx, schema, ms) })
	})
}

// withMigrationLock runs fn holding the session advisory lock that
// serializes the migrations of schema across sessions, and so across
// processes. It is a session's lock, taken before fn's transaction
// begins, for the reason pgstore gives: a transaction that began before
// the previous holder committed could still believe, from its session's
// cache of the catalog, that the schema is missing. If the lock statement
// or the release fails, the lock may still be held, so conn is closed,
// which releases every lock of its session, and fn's result stands.
func withMigrationLock(ctx context.Context, conn *pgx.Conn, schema string, fn func() error) error {
	id := lockID(schema)
	_, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", id)
	if err == nil {
		err = fn()
		var released bool
		if rerr := conn.QueryRow(ctx, "SELECT pg_advisory_unlock($1)", id).Scan(&released); rerr == nil && released {
			return err
		}
	}
	_ = conn.Close(context.WithoutCancel(ctx))
	return err
}

// runMigrations runs, in tx, the migrations of ms that schema has not run
// yet, creating the schema and its rate_migrations table if needed.
func runMigrations(ctx context.Context, tx pgx.Tx, schema string, ms []migration) error {
	for _, stmt := range []string{
		"CREATE SCHEMA IF NOT EXISTS " + schema,
		// pg_temp last: a temporary table of the session never stands
		// for one of the schema's.
		"SET LOCAL search_path TO " + schema + ", pg_temp",
		`CREATE TABLE IF NOT EXISTS rate_migrations (
			version    integer     PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`,
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	rows, err := tx.Query(ctx, "SELECT version FROM rate_migrations")
	if err != nil {
		return err
	}
	vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return err
	}
	done := map[int]bool{}
	for _, v := range vs {
		done[int(v)] = true
	}
	for _, m := range ms {
		if done[m.version] {
			continue
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO rate_migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
			return err
		}
	}
	return nil
}

// lockID is the advisory lock that serializes the migrations of schema;
// pgstore's locks hash another text, so the two never share one.
func lockID(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("pgrate migrate " + schema))
	return int64(h.Sum64())
}
