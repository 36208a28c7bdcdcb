// Package pgmigrate runs a package's numbered SQL migrations on a
// PostgreSQL schema: each once per schema, in order, in one transaction,
// and one process at a time however many start together.
package pgmigrate

import (
	"context"
	"fmt"
	"hash/fnv"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A Set is the migrations of one package.
type Set struct {
	// Owner names the package in errors and in its lock ("pgstore"):
	// two Sets of different owners never share a lock.
	Owner string
	// Table is the schema's table that records the migrations run.
	Table string
	// Files holds the migrations as *.sql under Dir, numbered by the
	// digits before the first "_" of their names.
	Files fs.FS
	Dir   string
}

// A migration is one numbered step of the schema.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the Set's migrations in order.
func (s Set) migrations() ([]migration, error) {
	names, err := fs.Glob(s.Files, s.Dir+"/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		digits, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(digits)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%s: migration %s is not numbered", s.Owner, base)
		}
		b, err := fs.ReadFile(s.Files, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("%s: no migrations under %s", s.Owner, s.Dir)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i := 1; i < len(ms); i++ {
		if ms[i].version == ms[i-1].version {
			return nil, fmt.Errorf("%s: migrations %s and %s share a number", s.Owner, ms[i-1].name, ms[i].name)
		}
	}
	return ms, nil
}

// Run brings schema, quoted, up to the Set's last migration. A schema that
// is up to date costs one query and needs no privilege beyond reading it.
// Otherwise, on a connection of its own, it takes the schema's migration
// lock (withLock) and then, in one transaction, creates the schema if
// needed, runs the migrations it has not run yet with search_path set to
// it, and records them in Table. A migration added with a number below
// the last one a schema ran is never run there: number them in the order
// they land.
func (s Set) Run(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	ms, err := s.migrations()
	if err != nil {
		return err
	}
	last := ms[len(ms)-1].version
	var have int
	err = pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+schema+"."+s.Table).Scan(&have)
	if err == nil && have >= last {
		return nil
	}
	// Otherwise the schema is missing or behind: the transaction finds out.
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release() // or destroyed, if withLock closed it
	return s.withLock(ctx, conn.Conn(), schema, func() error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error { return s.run(ctx, tx, schema, ms) })
	})
}

// withLock runs fn holding the advisory lock that serializes the Set's
// migrations of schema across sessions, and so across processes.
//
// The lock is a session's, taken before fn's transaction begins, not one
// of that transaction: a transaction reads the catalog changes that others
// committed before it began, and the session's cache of the catalog may
// hold what it saw before (that the schema does not exist, say), which a
// transaction that began before the previous holder committed would still
// believe once it got the lock, and would then create the schema again.
// The session releases the lock when fn returns; if the lock statement or
// the release fails, the lock may still be held, so conn is closed, which
// releases every lock of its session, and fn's result stands.
func (s Set) withLock(ctx context.Context, conn *pgx.Conn, schema string, fn func() error) error {
	id := s.lockID(schema)
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

// run runs, in tx, the migrations of ms that schema has not run yet,
// creating the schema and Table if needed.
func (s Set) run(ctx context.Context, tx pgx.Tx, schema string, ms []migration) error {
	for _, stmt := range []string{
		"CREATE SCHEMA IF NOT EXISTS " + schema,
		// pg_temp last: a temporary table of the session never stands
		// for one of the schema's.
		"SET LOCAL search_path TO " + schema + ", pg_temp",
		`CREATE TABLE IF NOT EXISTS ` + s.Table + ` (
			version    integer     PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`,
	} {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	rows, err := tx.Query(ctx, "SELECT version FROM "+s.Table)
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
		if _, err := tx.Exec(ctx, "INSERT INTO "+s.Table+" (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
			return err
		}
	}
	return nil
}

// lockID is the advisory lock of the Set's migrations of schema.
func (s Set) lockID(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte(s.Owner + " migrate " + schema))
	return int64(h.Sum64())
}
