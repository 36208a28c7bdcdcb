package pgrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pacerkit/pacer/pg/pgrate"
)

// BenchmarkWriteFloor runs statements that do less than Allow's, with the
// same arguments and three timestamps in reply, to show what any write
// costs on this server: xid takes a transaction ID (as every write does)
// and writes nothing; update sets one column of the bucket's row by its
// primary key. Allow's x-select1 less update's is what the upsert and
// GCRA's arithmetic cost.
func BenchmarkWriteFloor(b *testing.B) {
	pool := connect(b)
	schema := freshSchema(b, pool)
	l := newBucket(b, pool, pgrate.BucketConfig{Rate: huge, Burst: huge, Name: "bench", Schema: schema})
	ctx := context.Background()
	if ok, err := l.Allow(ctx); !ok || err != nil { // the row
		b.Fatal(ok, err)
	}
	t := pgx.Identifier{schema, "rate_buckets"}.Sanitize()
	args := `$1::bytea IS NOT NULL AND $2::boolean IS NOT NULL AND $3::bytea IS NOT NULL AND $4::interval IS NOT NULL AND $5::interval IS NOT NULL`
	for _, s := range []struct{ name, sql string }{
		{"xid", `SELECT now(), now(), now() WHERE pg_current_xact_id() IS NOT NULL AND ` + args},
		{"update", `UPDATE ` + t + ` SET seen = clock_timestamp() WHERE name = $1 AND keyed = $2 AND key = $3 AND ` + args + ` RETURNING seen, tat, seen`},
	} {
		b.Run(s.name, func(b *testing.B) {
			versusSelect1(b, pool, func(int64) error {
				var x, y, z time.Time
				return pool.QueryRow(ctx, s.sql, []byte("bench"), false, []byte{}, time.Microsecond, time.Second).Scan(&x, &y, &z)
			})
		})
	}
}
