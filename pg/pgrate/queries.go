package pgrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// queries are the statements of the package in one schema. Each is one
// statement, sent as a prepared statement (pgx caches them per
// connection), so each call is one round trip. Times are the server's
// clock_timestamp(), read once per statement part, after the bucket's row
// is locked; durations are intervals of whole microseconds.
type queries struct {
	allow, allowKeys, take, takes, try, tries, pause, release, sweep string
}

// newQueries returns the statements on the tables of schema, quoted.
func newQueries(schema string) *queries {
	t := schema + ".rate_buckets"
	return &queries{
		// allow takes one event if it conforms now: take with $6 = 0, for
		// Allow (and a Wait's first try), which needs to know only whether
		// it was taken. It returns no row; the command tag says how many
		// rows it wrote, 1 if the event was taken, 0 if refused.
		//
		// $1, $2, $3, $4, $5 as take's. A bucket without a row is full:
		// the row is inserted with tat one interval from now. Otherwise,
		// with the row locked, the WHERE reads the clock and refuses the
		// event unless greatest(paused_until, tat + interval - span) is
		// at or before it, and the SET reads it again, no earlier, and
		// sets tat to greatest(tat, now) + interval: the event conforms
		// at the first reading, so it does at the second, its now.
		//
		// It is take cut to what Allow needs, because each part costs
		// time on the server: no reply row, no seen (which only take's
		// reply reads), no subquery to read the clock once for two
		// columns; the row is rewritten either way.
		allow: `INSERT INTO ` + t + ` AS b (name, keyed, key, tat, paused_until, seen)
VALUES ($1::bytea, $2::boolean, $3::bytea, clock_timestamp() + $4::interval, clock_timestamp(), clock_timestamp())
ON CONFLICT (name, keyed, key) DO UPDATE
SET tat = greatest(b.tat, clock_timestamp()) + $4::interval
WHERE greatest(b.paused_until, b.tat + $4::interval - $5::interval) <= clock_timestamp()`,

		// allowKeys is allow for several keys of one Keyed at once, $3
		// (keyflight.go), each at most once, in one transaction. It
		// returns the keys whose event it took. It takes the keys in
		// their order, so that two of them, in any processes, lock the
		// rows they share in the same order, and never wait for each
		// other both ways; every other statement locks one row, but for
		// the sweep, which skips locked rows.
		allowKeys: `INSERT INTO ` + t + ` AS b (name, keyed, key, tat, paused_until, seen)
SELECT $1::bytea, $2::boolean, k.key, clock_timestamp() + $4::interval, clock_timestamp(), clock_timestamp()
FROM unnest($3::bytea[]) AS k(key)
ORDER BY k.key
ON CONFLICT (name, keyed, key) DO UPDATE
SET tat = greatest(b.tat, clock_timestamp()) + $4::interval
WHERE greatest(b.paused_until, b.tat + $4::interval - $5::interval) <= clock_timestamp()
RETURNING b.key`,

		// take takes one event (GCRA): now, or at the earliest instant it
		// conforms, unless that is more than $6 away ($6 NULL: any).
		//
		// $1, $2, $3: the bucket's name, keyed, key. $4: the interval
		// between two events (1/Rate). $5: the span of a full bucket
		// (Burst * interval). $6: the longest delay accepted.
		//
		// A bucket without a row is full: its event conforms now, and the
		// row is inserted with tat one interval from now. Otherwise, with
		// its row locked and now read then, the event conforms at
		//
		//	at = greatest(now, paused_until, tat + interval - span)
		//
		// If at - now > $6 the WHERE refuses it: no row comes back and
		// nothing is written. Otherwise tat becomes greatest(tat, at) +
		// interval, and seen now. The reply gives seen and at, so the
		// delay is at - seen, and the tat that release needs. at is
		// recomputed from the new row: greatest(seen, paused_until,
		// tat - span) is the at above whichever of tat and at was
		// greater, as span >= interval.
		//
		// The WHERE reads the clock before the SET does, never after, so
		// the delay granted is at most the one the WHERE accepted.
		take: `INSERT INTO ` + t + ` AS b (name, keyed, key, tat, paused_until, seen)
SELECT $1::bytea, $2::boolean, $3::bytea, c.now + $4::interval, c.now, c.now
FROM (SELECT clock_timestamp() AS now) c
ON CONFLICT (name, keyed, key) DO UPDATE
SET (tat, seen) = (
	SELECT greatest(b.tat, c.now, b.paused_until, b.tat + $4::interval - $5::interval) + $4::interval, c.now
	FROM (SELECT clock_timestamp() AS now) c)
WHERE $6::interval IS NULL
   OR greatest(b.paused_until, b.tat + $4::interval - $5::interval) - clock_timestamp() <= $6::interval
RETURNING b.seen, greatest(b.seen, b.paused_until, b.tat - $5::interval), b.tat`,

		// takes calls rate_takes (migration 002): take for several events
		// at once, the calls of one value that came at the same time
		// (flight.go). $6: the longest delay each accepts, NULL for any.
		takes: `SELECT seen, at, tat FROM ` + schema + `.rate_takes($1::bytea, $2::boolean, $3::bytea, $4::interval, $5::interval, $6::interval[])`,

		// try calls rate_try (migration 003): take one event if it
		// conforms now ($6 true), or only look ($6 false), and tell when
		// it conforms either way; a refused take writes nothing.
		try: `SELECT seen, at FROM ` + schema + `.rate_try($1::bytea, $2::boolean, $3::bytea, $4::interval, $5::interval, $6::boolean)`,

		// tries calls rate_tries (migration 004): try, taking, for each
		// key of $3 (keyflight.go), in one transaction; a row per key,
		// with its position in $3 from 1.
		tries: `SELECT pos, seen, at FROM ` + schema + `.rate_tries($1::bytea, $2::boolean, $3::bytea[], $4::interval, $5::interval)`,

		// pause pauses the bucket for $4 from now, unless it is paused
		// until then or later already: a pause is only ever extended. A
		// pause that is set or extended also empties the bucket (tat at
		// least now + span), which then refills from now. It returns the
		// clock it read and the pause's end, no row if it changed nothing.
		pause: `INSERT INTO ` + t + ` AS b (name, keyed, key, tat, paused_until, seen)
SELECT $1::bytea, $2::boolean, $3::bytea, c.now + $5::interval, c.now + $4::interval, c.now
FROM (SELECT clock_timestamp() AS now) c
ON CONFLICT (name, keyed, key) DO UPDATE
SET (tat, paused_until, seen) = (
	SELECT greatest(b.tat, c.now + $5::interval), c.now + $4::interval, c.now
	FROM (SELECT clock_timestamp() AS now) c)
WHERE b.paused_until < clock_timestamp() + $4::interval
RETURNING b.seen, b.paused_until`,

		// release gives back the event whose take wrote tat $4, moving
		// tat back by one interval ($5), if no event was taken since (tat
		// is still $4) and no pause is in effect.
		release: `UPDATE ` + t + ` SET tat = tat - $5::interval
WHERE name = $1::bytea AND keyed = $2::boolean AND key = $3::bytea
  AND tat = $4::timestamptz AND paused_until <= clock_timestamp()`,

		// sweep reads at most $4 rows in the order of the primary key,
		// from ($1, $2, $3) on, and deletes those whose bucket is full and
		// not paused: a row that says nothing a missing row would not.
		// It returns the last row it read and how many it read and
		// deleted; no row if it read none. It never waits for a lock: it
		// locks the idle rows it deletes first, skipping those that a
		// take holds (in use, so not idle), and so never takes part in a
		// deadlock with allowKeys, which locks several rows.
		sweep: `WITH batch AS (
	SELECT name, keyed, key FROM ` + t + `
	WHERE (name, keyed, key) >= ($1::bytea, $2::boolean, $3::bytea)
	ORDER BY name, keyed, key
	LIMIT $4::integer
), idle AS (
	SELECT b.name, b.keyed, b.key FROM ` + t + ` b
	WHERE (b.name, b.keyed, b.key) IN (SELECT name, keyed, key FROM batch)
	  AND greatest(b.tat, b.paused_until) < clock_timestamp()
	FOR UPDATE OF b SKIP LOCKED
), gone AS (
	DELETE FROM ` + t + ` b USING idle
	WHERE b.name = idle.name AND b.keyed = idle.keyed AND b.key = idle.key
	  AND greatest(b.tat, b.paused_until) < clock_timestamp()
	RETURNING 1
)
SELECT name, keyed, key, count(*) OVER (), (SELECT count(*) FROM gone)
FROM batch
ORDER BY name DESC, keyed DESC, key DESC
LIMIT 1`,
	}
}

// server is what a bucket asks of PostgreSQL, one statement each. *remote
// is the real one; the tests of the waiting logic may use a fake.
type server interface {
	// take takes one event, now or later, unless it would come more than
	// most from now (most < 0: any).
	take(ctx context.Context, most time.Duration) (turn, error)
	// release gives back the event whose take returned tat, if it safely
	// can (see queries.release).
	release(ctx context.Context, tat time.Time) error
	// pauseFor pauses the bucket for d, unless it is paused for longer
	// already.
	pauseFor(ctx context.Context, d time.Duration) error
}

// A turn is what take gave one event: its delay (refused: nothing was
// taken), the tat that release needs, and the server's clock that the
// statement read (zero if it read none, as when a row was refused).
type turn struct {
	refused bool
	delay   time.Duration
	tat     time.Time
	now     time.Time
}

// remote is one bucket in PostgreSQL: its row's key. It implements
// server.
type remote struct {
	pool *pgxpool.Pool
	s    *shape
	key  []byte
}

// take runs queries.allow if most is 0, else queries.take; see server.
// A turn of queries.allow carries neither tat nor the server's clock:
// its delay is 0, so no release needs its tat.
func (r *remote) take(ctx context.Context, most time.Duration) (turn, error) {
	if most != 0 {
		return r.takeRow(ctx, most)
	}
	tag, err := r.pool.Exec(ctx, r.s.q.allow, r.s.nameArg, r.s.keyed, r.key, r.s.interval, r.s.span)
	if err != nil {
		return turn{}, err
	}
	return turn{refused: tag.RowsAffected() == 0}, nil
}

// takeRow runs queries.take, which takes an event unless its delay would
// be more than most (< 0: any), and returns its turn.
func (r *remote) takeRow(ctx context.Context, most time.Duration) (turn, error) {
	var mostArg any
	if most >= 0 {
		mostArg = most
	}
	var t turn
	var at time.Time
	err := r.pool.QueryRow(ctx, r.s.q.take, r.s.nameArg, r.s.keyed, r.key, r.s.interval, r.s.span, mostArg).
		Scan(&t.now, &at, &t.tat)
	if errors.Is(err, pgx.ErrNoRows) {
		return turn{refused: true}, nil
	}
	if err != nil {
		return turn{}, err
	}
	t.delay = max(at.Sub(t.now), 0)
	return t, nil
}

// takes runs queries.takes for one event per element of most (< 0: any
// delay), in that order, and returns each one's turn as take does.
func (r *remote) takes(ctx context.Context, most []time.Duration) ([]turn, error) {
	arg := make([]pgtype.Interval, len(most))
	for i, m := range most {
		arg[i] = pgtype.Interval{Microseconds: m.Microseconds(), Valid: m >= 0}
	}
	rows, err := r.pool.Query(ctx, r.s.q.takes, r.s.nameArg, r.s.keyed, r.key, r.s.interval, r.s.span, arg)
	if err != nil {
		return nil, err
	}
	turns := make([]turn, 0, len(most))
	var now time.Time
	var at, tat pgtype.Timestamptz
	_, err = pgx.ForEachRow(rows, []any{&now, &at, &tat}, func() error {
		t := turn{refused: !at.Valid, now: now}
		if at.Valid {
			t.delay, t.tat = max(at.Time.Sub(now), 0), tat.Time
		}
		turns = append(turns, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(turns) != len(most) {
		return nil, fmt.Errorf("rate_takes returned %d rows for %d events", len(turns), len(most))
	}
	return turns, nil
}

// try runs queries.try: it takes one event if it conforms now and take
// is set, and returns the server's clock it read and the instant the
// event conforms, equal to that clock if it does now.
func (r *remote) try(ctx context.Context, take bool) (now, at time.Time, err error) {
	err = r.pool.QueryRow(ctx, r.s.q.try, r.s.nameArg, r.s.keyed, r.key, r.s.interval, r.s.span, take).Scan(&now, &at)
	return now, at, err
}

// release runs queries.release; see server.
func (r *remote) release(ctx context.Context, tat time.Time) error {
	_, err := r.pool.Exec(ctx, r.s.q.release, r.s.nameArg, r.s.keyed, r.key, tat, r.s.interval)
	return err
}

// pauseFor runs queries.pause; see server.
func (r *remote) pauseFor(ctx context.Context, d time.Duration) error {
	_, _, err := r.pause(ctx, d)
	return err
}

// pause runs queries.pause and returns the server's clock that it read
// and the end of the pause it set, both zero if it changed nothing.
func (r *remote) pause(ctx context.Context, d time.Duration) (now, until time.Time, err error) {
	err = r.pool.QueryRow(ctx, r.s.q.pause, r.s.nameArg, r.s.keyed, r.key, d, r.s.span).Scan(&now, &until)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, time.Time{}, nil
	}
	return now, until, err
}
