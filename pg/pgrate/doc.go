// Package pgrate is a rate limit shared by every instance of a service
// that runs on PostgreSQL alone: a token bucket kept in a row of a table,
// paced by GCRA on the server's clock, with a pause that any instance can
// set and every instance obeys. It is package redisrate's counterpart,
// with the same names and the same guarantees, for a service that has no
// Redis.
//
//	pool, err := pgxpool.New(ctx, "postgres://127.0.0.1:5432/app")
//	notion, err := pgrate.NewBucket(ctx, pool, pgrate.BucketConfig{Rate: 3, Burst: 3, Name: "notion"})
//
// A Bucket is a ratelimit.Limiter (Wait) and a ratelimit.Pauser
// (PauseFor), so it goes wherever a ratelimit.Bucket goes: a pacer
// Config.Limiter, a ratelimit.Transport, or both, the same value. A 429 or
// 503 with Retry-After that the Transport receives, or a handler's
// pacer.PauseAll, then pauses every instance, not just this one. Keyed is
// the per-key form (per-account limits): Keyed.For(key) is a
// ratelimit.Limiter and ratelimit.Pauser of one key, and Keyed itself is
// a ratelimit.KeyGate, a pacer Config.KeyLimit: a key without a token is
// put aside until its token is due, in every instance.
//
// # One statement per call
//
// Allow runs one statement (queries.allow in queries.go) in one round
// trip: an INSERT ... ON CONFLICT DO UPDATE on the bucket's row that
// returns no row, only its count; pgx prepares it once per connection and
// then sends only its arguments. A missing row is a full bucket: the
// statement inserts it. Otherwise, with the row locked, it reads the
// server's clock (clock_timestamp()) and computes GCRA: with interval =
// 1/Rate and span = Burst·interval, in whole microseconds, the event
// conforms at
//
//	at = greatest(now, paused_until, tat + interval - span)
//
// If at is after now it refuses and writes nothing; otherwise it sets tat
// to greatest(tat, now) + interval. Wait first runs the same statement,
// which is all a Wait whose token is there needs. Only if that refuses
// does it run the take statement (queries.take), of the same shape, which
// accepts a delay up to the time left before ctx's deadline, sets tat to
// greatest(tat, at) + interval and returns now and at; Wait then sleeps
// at - now on one local timer, never asking again. So a Wait that has to
// wait makes two round trips, and a Wait that need not, one. Pause runs a
// statement of the same shape; a Wait whose ctx ends gives its turn back
// with an UPDATE.
//
// The calls of one Bucket (or KeyLimiter) value share round trips when
// several come at once: one flies at a time, alone, as above; the calls
// that come meanwhile wait for it to land, and then go together in one
// call of the function rate_takes (migration 002), which locks the row
// once, takes their events in the order they came, each as the statement
// would, at one reading of the clock, and writes the row once (flight.go).
// Every call of a bucket locks its one row, so calls in flight at once
// would only queue for that lock on the server; a flight carries them in
// one round trip, one lock and one write. A caller alone costs what it
// did. The Allows of one Keyed value, and its Waits' first statements,
// share flights in the same way whatever their keys (keyflight.go): a
// flight runs one statement, queries.allowKeys, that takes one event of
// each of its keys as Allow would, in one transaction, locking their rows
// in the order of the keys, so that two flights never wait for each other
// both ways; the sweep, the one other statement that locks several rows,
// skips the rows it finds locked. Keyed.Wait's take statement, when it
// has to wait, goes alone.
//
// Keyed.TakeKey and Keyed.PeekKey (ratelimit.KeyGate) never wait: each
// calls the function rate_try (migration 003) once, which computes at as
// above at the server's clock and returns now and at. TakeKey locks the
// row and takes the event only if at = now; a refused TakeKey writes
// nothing. PeekKey neither locks nor writes, and makes no row. The
// TakeKey calls of one Keyed value share flights whatever their keys, as
// its Allows do (keyflight.go): a flight calls the function rate_tries
// (migration 004) once, which runs rate_try for each of its calls in one
// transaction, locking the rows in the order of the keys (a key that
// comes twice in the order its calls came, the second seeing the first),
// as allowKeys does; each key's decision reads the clock once its row is
// locked, as rate_try's does.
//
// # Guarantees
//
//   - Rate: every process on the same database, Schema and Name shares
//     one bucket. The events that Allow and Wait (and TakeKey, of a
//     Keyed) let through, in all of them together, conform to GCRA on
//     the server's clock: at most Burst + Rate·t in any span t, with the
//     interval 1/Rate rounded to the microsecond. The row lock orders the
//     calls; each reads the clock once it holds the lock. A Wait returns
//     at its turn on the server's clock or later (its sleep starts when
//     the reply arrives); the clocks of the processes need not agree.
//     Keyed gives the same per key.
//   - Pauses: Pause (PauseFor) holds the bucket in every process: every
//     Allow and Wait that reaches the server after it is refused, or
//     sleeps until it ends; a TakeKey is refused with the wait until it
//     ends. A pause only ever extends the current one, never shortens
//     it; setting or extending one empties the bucket, so that at most
//     min(Burst, Rate·d) events pass at once when a pause of d ends. A
//     Wait that took its turn before the pause and is sleeping in another
//     process goes at its turn: a process hears of a pause on its next
//     round trip. In the Bucket or KeyLimiter value that set the pause,
//     every Wait and Allow is held from the moment Pause is called, even
//     if the server cannot be told.
//   - Contexts: Allow, Wait and TakeKey check ctx first. A Wait whose
//     turn would come after ctx's deadline returns
//     ratelimit.ErrWouldExceedDeadline after one round trip, having taken
//     nothing; a call whose ctx ends while it waits to share a round trip
//     (see above) returns ctx.Err() without one, having taken nothing. A Wait whose ctx ends while it sleeps returns ctx.Err() after one more round trip (at most
//     one second, whatever ctx) that gives its turn back, moving tat back
//     by one interval, if the tat is still the one it wrote and no pause
//     is in effect; otherwise, or if the server cannot be reached, the
//     turn is lost: the bucket lets one event fewer through, never one
//     more. So is a turn whose reply never arrived.
//   - Concurrency: every type is safe for concurrent use. None owns a
//     goroutine or needs Close; the pool is the caller's.
//
// # The table, and what a crash loses
//
// The buckets live in the table rate_buckets of the schema
// BucketConfig.Schema ("pacer_rate" by default), a row per bucket in use:
// a Bucket's (name, keyed false, key empty), a Keyed's key's (name, keyed
// true, key), so a Bucket and a Keyed of one Name share nothing. Name and
// key are bytea: any bytes will do. The row holds tat, paused_until and the
// clock the last take statement read (seen), which its reply returns;
// Allow's statement leaves seen as it was.
//
// The table is UNLOGGED. Its writes skip the write-ahead log, so a call
// commits without waiting for the disk, and its cost is that of the
// statement, not of a flush (synchronous_commit off would spare the wait,
// but still write the log, and is the session's setting, not the
// table's). The price: a crash of the server (not a clean shutdown)
// empties the table, and an unlogged table is not replicated, so a
// standby promoted to primary starts with it empty. Either way every
// bucket is full again and every pause is forgotten: after a crash, at
// most Burst events per bucket may pass at once that a logged table would
// have refused, and a remote's Retry-After is forgotten once. A rate
// limit's state is worth less than that wait on every call.
//
// NewBucket and NewKeyed create the schema and the table if missing, as
// package pgstore does its own: the migrations are embedded, numbered,
// recorded in the schema's rate_migrations table, and run in one
// transaction under a session advisory lock derived from the schema's
// name, so that processes starting at once take turns. Once the schema is
// up to date they cost one query, and need no privilege beyond reading
// it. The tables' names are the package's own, so a schema shared with a
// pgstore.Store still works; a schema of its own is cleaner.
//
// # Idle rows
//
// A bucket whose row says it is full and not paused behaves as if the row
// were missing. A sweep deletes such rows: one statement that reads at
// most SweepBatch rows in the order of the primary key, from where the
// Keyed's last sweep stopped (from the first row again after the last),
// and deletes the idle ones. No sweep reads the whole table, and sweeps
// in turn visit every row. A Keyed runs one in the first Allow, Wait or
// TakeKey after each KeyedConfig.SweepEvery (10 s by default), after
// that call's own statement; Keyed.Sweep runs one at will. A sweep never
// waits for a lock: it skips a row that a call holds (that key is in use)
// and leaves a row that a call made matter since the sweep read it. So
// rows cost space only while keys are busy, or for a few sweeps after.
//
// # Failures
//
// A call that cannot reach PostgreSQL returns pgx's error wrapped with the
// package, the call and the bucket: `pgrate: Allow on "notion": ...` (and
// `..., key "acct-42": ...` for a Keyed). NewBucket and NewKeyed name the
// schema: `pgrate: schema "pacer_rate": ...`.
//
// Allow fails closed by default: it answers false with the error, so an
// outage of the database stops the events it guards. With
// BucketConfig.FailOpen it answers true with the error: the service keeps
// going, unlimited, while the database is down. Wait returns the error
// whatever FailOpen says: it cannot pace without the server, and the
// caller decides (a pacer Runner backs off and asks again). Pause returns
// the error too; PauseFor, which has no ctx and no error, bounds its round
// trip by one second and keeps its error for Err. Either way the value it
// was called on holds its own calls for the pause.
//
// # Performance
//
// Allow, and a Wait that need not wait, make one round trip, one prepared
// statement, and write the bucket's row: a transaction with a transaction
// ID, an update that stays on the row's page (HOT, fillfactor 50) and a
// commit that waits for no disk. That write is most of the cost: a bare
// one-column UPDATE of the same row costs about what Allow does
// (BenchmarkWriteFloor). Allow's statement returns no row and computes
// only what it writes, which cost measurably more on the server when it
// returned the clock, at and tat. With several calls in flight, a flight
// of them shares one round trip and one transaction; of one bucket, also
// one write.
// Figures, as multiples of a SELECT 1 on the same pool, serially and with
// 8 calls in flight, and the command that reproduces them: BENCHMARKS.md
// at the repository root.
//
// Every call of one bucket, in every process, updates one row, so the
// calls take turns on its lock, and the row leaves a dead version per
// call until its page is pruned or the table vacuumed, which a long
// transaction anywhere in the database holds back: a busy bucket shares a
// server that runs long transactions less well than one that runs none.
package pgrate
