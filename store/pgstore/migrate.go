package pgstore

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

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The migrations, numbered by the digits before the first "_" of their
// names; each runs once per schema, in order.
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
func migrations() ([]migration, error) {
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
			return nil, fmt.Errorf("pgstore: migration %s is not numbered", base)
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
			return nil, fmt.Errorf("pgstore: migrations %s and %s share a number", ms[i-1].name, ms[i].name)
		}
	}
	return ms, nil
}

// migrate brings schema, quoted, up to the last migration. A schema that
// is up to date costs one query and needs no privilege beyond reading it.
// Otherwise one transaction, holding an advisory lock of the schema so
// that processes starting together take turns, creates the schema if
// needed, runs the migrations it has not run yet with search_path set to
// it, and records them in its migrations table.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	last := ms[len(ms)-1].version
	var have int
	err = pool.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+schema+".migrations").Scan(&have)
	if err == nil && have >= last {
		return nil
	}
	// Otherwise the schema is missing or behind: the transaction finds out.
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", lockID(schema)); err != nil {
			return err
		}
		for _, stmt := range []string{
			"CREATE SCHEMA IF NOT EXISTS " + schema,
			"SET LOCAL search_path TO " + schema,
			`CREATE TABLE IF NOT EXISTS migrations (
				version    integer     PRIMARY KEY,
				name       text        NOT NULL,
				applied_at timestamptz NOT NULL DEFAULT now()
			)`,
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		done := map[int]bool{}
		rows, err := tx.Query(ctx, "SELECT version FROM migrations")
		if err != nil {
			return err
		}
		vs, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			return err
		}
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
			if _, err := tx.Exec(ctx, "INSERT INTO migrations (version, name) VALUES ($1, $2)", m.version, m.name); err != nil {
				return err
			}
		}
		return nil
	})
}

// lockID is the advisory lock that serializes the migrations of schema.
func lockID(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("pgstore migrate " + schema))
	return int64(h.Sum64())
}
