package pgrate

import (
	"context"
	"embed"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer/pg/internal/pgmigrate"
)

// The migrations, numbered by the digits before the first "_" of their
// names; each runs once per schema, in order. They follow pgstore's, with
// tables of their own (rate_migrations, rate_buckets) and a lock of their
// own, so a schema shared with a pgstore.Store by mistake still works.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

var migrations = pgmigrate.Set{Owner: "pgrate", Table: "rate_migrations", Files: migrationFiles, Dir: "migrations"}

// migrate brings schema, quoted, up to the last migration (see
// pgmigrate.Set.Run).
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	return migrations.Run(ctx, pool, schema)
}
