package pgrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/pacerkit/pacer/pg/pgrate"
)

func BenchmarkExp(b *testing.B) {
	pool := connect(b)
	schema := freshSchema(b, pool)
	l := newBucket(b, pool, pgrate.BucketConfig{Rate: huge, Burst: huge, Name: "bench", Schema: schema})
	_, _ = l.Allow(context.Background())
	t := pgx.Identifier{schema, "rate_buckets"}.Sanitize()
	ctx := context.Background()
	name, key := []byte("bench"), []byte{}
	iv, sp := time.Microsecond, time.Second
	stmts := map[string]string{
		"clock": `SELECT clock_timestamp(), clock_timestamp(), clock_timestamp() WHERE $1::bytea IS NOT NULL AND $2::boolean IS NOT NULL AND $3::bytea IS NOT NULL AND $4::interval IS NOT NULL AND $5::interval IS NOT NULL`,
		"update": `UPDATE ` + t + ` b SET tat = greatest(b.tat, now(), b.paused_until, b.tat + $4::interval - $5::interval) + $4::interval, seen = now()
WHERE name = $1 AND keyed = $2 AND key = $3 RETURNING b.seen, greatest(b.seen, b.paused_until, b.tat - $5::interval), b.tat`,
		"upsertnow": `INSERT INTO ` + t + ` AS b (name, keyed, key, tat, paused_until, seen)
SELECT $1::bytea, $2::boolean, $3::bytea, now() + $4::interval, '-infinity', now()
ON CONFLICT (name, keyed, key) DO UPDATE
SET tat = greatest(b.tat, now(), b.paused_until, b.tat + $4::interval - $5::interval) + $4::interval, seen = now()
RETURNING b.seen, greatest(b.seen, b.paused_until, b.tat - $5::interval), b.tat`,
	}
	stmts["bare"] = `UPDATE ` + t + ` SET seen = now() WHERE name = $1 AND keyed = $2 AND key = $3 AND $4::interval IS NOT NULL AND $5::interval IS NOT NULL RETURNING seen, seen, seen`
	stmts["read"] = `SELECT seen, tat, paused_until FROM ` + t + ` WHERE name = $1 AND keyed = $2 AND key = $3 AND $4::interval IS NOT NULL AND $5::interval IS NOT NULL`
	delete(stmts, "clock")
	delete(stmts, "update")
	delete(stmts, "upsertnow")
	stmts["xid"] = `SELECT now(), now(), now() WHERE pg_current_xact_id() IS NOT NULL AND $1::bytea IS NOT NULL AND $2::boolean IS NOT NULL AND $3::bytea IS NOT NULL AND $4::interval IS NOT NULL AND $5::interval IS NOT NULL`
	for nm, q := range stmts {
		versusSelect1Named(b, nm, pool, func(int64) error {
			var a, c, d time.Time
			return pool.QueryRow(ctx, q, name, false, key, iv, sp).Scan(&a, &c, &d)
		})
	}
}
