// Package pgstore is a store.Store that keeps its state in PostgreSQL, on
// github.com/jackc/pgx/v5: the values waiting per key, bursts, leases,
// retries, held keys and dead letters live in the database that a service
// already runs, shared by all of its processes, and enqueueing can take
// part in the service's own transactions (AddTx, which a pacer Runner's
// AddTx calls). A Store implements store.Store, store.DeadLetters,
// store.FinishClaimer and store.TxAdder, and passes the same conformance
// suite as store.Memory (store/storetest).
//
// # Schema
//
// A Store's tables live in a schema of their own (Config.Schema, "pacer" by
// default); Stores with different schemas never see each other's state.
// New creates the schema and runs the migrations it has not run yet: they
// are embedded, numbered, recorded in the schema's migrations table, and
// run in one transaction. Processes that start at once take turns: before
// that transaction begins, and so before CREATE SCHEMA, New takes a
// session advisory lock whose ID is derived from the schema's name, and
// releases it after the commit, so that the later ones find nothing to do.
// The lock is taken before the transaction, not in it, because a
// transaction that began before the previous holder committed could
// believe, from its session's cache of the catalog, that the schema is
// still missing. A session whose lock cannot be released is closed, which
// releases it; a process that dies releases it with its connection. Once
// the schema is up to date New only reads it, so a role without the right
// to create tables can use a schema migrated by another. A migration may
// change what the statements of an earlier version expect (003 indexes
// keys by their hash, and the earlier statements then fail): stop the
// processes of an earlier version before one of a later version migrates
// their schema.
//
// The schema holds:
//
//   - keys: a row per (queue, key) that has values, found by the key's
//     SHA-256 (see Names), with the key's place in the ready order
//     (ready_at), its lease (fence, leased_until), its head batch (kept
//     whole across a retry, a deferral or a lapse), attempt, open burst
//     (first value, deadline) and whether it is held;
//   - messages: the values, a row each, in (queue, key's SHA-256, seq)
//     order;
//   - fences: the sequence that numbers every lease, so that a key's fences
//     keep growing after its row was removed and made again;
//   - dead_letters: the dropped batches, with the error, the attempt and
//     the time;
//   - counts: how many values each queue stores, for
//     store.AddParams.MaxValues, spread over rows (see below).
//
// # Claims and leases
//
// Exclusivity comes from the key rows alone. Claim is one statement: it
// selects the ready keys of the queue, oldest-ready first, FOR UPDATE SKIP
// LOCKED, updates them with a new fence and the lease's expiry, reads their
// values and commits. Message rows are never locked: a worker that skipped
// a locked message row would take value N+1 while N is in flight. A lease is
// a row's state, not a lock or a transaction: no transaction stays open
// while a handler runs, and a lease that is not extended lapses by time
// alone; its next Claim bumps the fence, and the old holder's Extend and
// Finish, which check fence and expiry in their one statement, are refused
// with store.ErrLeaseLost. A partial index orders the keys that are not
// held by ready_at (a leased key by its lease's expiry), so a Claim reads
// the keys that are ready and stops at the first that is not: its cost
// follows the ready keys, not the values queued behind them.
//
// Plans: PostgreSQL makes the plan of a prepared statement once, after its
// fifth run, and keeps it until its tables are vacuumed or analyzed; a
// plan made while a new schema held a few keys, when reading them all was
// cheapest, would read the whole queue on every run as it grows, for as
// long as autovacuum is late. The statements leave the planner no such
// plan: they read keys_ready only from the start of a queue's range, up
// to a LIMIT, and reach every other row by its primary key, from rows
// already found, so that their plans read pages in proportion to the keys
// they touch, whatever the size they were made at
// (TestPlansMadeSmallStayBounded). This rests on statistics no further
// from the truth than a new table's: on those of a VACUUM or ANALYZE that
// found a drained queue's tables empty, every plan looks cheap, until
// autovacuum comes by again once the queue refills. And every Claim steps
// over the dead row versions at the head of the ready order, which an
// open transaction anywhere in the database keeps from being cleaned.
//
// Every operation is one statement, one round trip, committed before it
// returns (with the server's synchronous_commit, durable then). Time is the
// server's: statements read statement_timestamp(), never the client's
// clock, so processes whose clocks disagree agree on deadlines.
//
// Acks are the exception, being most of the work: the Acks (Finish or
// FinishAndClaim with store.Ack) that a Store's callers send at about the
// same time share one statement, which ends all of their leases, and one
// commit, with the claim of the keys their FinishAndClaims ask for: a
// flight, led by one of the callers, sent in one round trip. Each caller
// still gets its own result: its own more, its own leases, and
// store.ErrLeaseLost for its lease alone if that did not hold. A Store has
// one flight in the air per queue and claim parameters; the Acks that come
// meanwhile take the next one, so a commit that waits for the disk serves every worker that
// acked meanwhile, and a flight that shortly follows one of FinishAndClaims
// may wait up to half a millisecond for that one's workers to come back.
// The shared statement never waits for the row lock of a key (an AddTx
// that holds a key's row, or another process's claim for a moment): a
// lease it skipped boards the next flight, and then its caller finishes it
// alone, which waits for the lock. It may wait a moment for the slot of
// removals in the queue's count that its session shares with another
// session's Acks (see below), never for a service's transaction. No
// goroutine of the Store runs the flights, and an Ack that comes to an
// idle queue takes off at once.
//
// # The count of stored values
//
// Every statement that stores or removes values (Add, AddTx, Redrive, the
// Finishes that ack or drop) counts them in the same statement, so an Add
// with store.AddParams.MaxValues reads the queue's count in O(1) and checks
// its bound in the statement that adds. One row per queue would make every
// Add and Ack of the queue wait for the commit of the one before; so the
// count is spread over slots: an Add without a bound writes one of 32,
// which the Adds of a Store take in turn (an AddTx, the one of its
// session), and an Ack or a Drop a slot of removals of its session's, so
// they wait only for a statement that shares their slot. A bounded Add
// locks every slot that Adds write, reading their latest values, and
// counts its values in a slot of its own: bounded Adds of a queue take
// turns, and wait for the unbounded Adds in flight, as a bound shared by
// every process needs; the slots of removals it reads without a lock, so
// an Ack committing meanwhile only makes it see a fuller queue. A
// statement locks its slots before its key's row, so a transaction that
// holds a slot (an AddTx's) cannot deadlock with one that holds the key's.
//
// FinishAndClaim with another outcome (Retry, Defer, Hold, Drop) runs
// Finish's statement, then Claim's, in one transaction, begun with them in
// one round trip and committed in a second, or rolled back when the lease
// was lost. Either way the Claim's statement reads a snapshot taken after
// the Finish's, so it leases exactly what a Claim right after the Finish
// would, with the same care for values added meanwhile.
//
// # Round trips
//
// go test -run '^$' -bench 'Select1|Add|Claim' -count 5, on a local
// PostgreSQL 15 (fsync and synchronous_commit on) on a 2-core machine
// shared with other work (load average 2 to 6); each figure next to
// BenchmarkSelect1 of the same run, 59-73 µs:
//
//	Add, one value, to a new key (notifies)      263-327 µs   4.2-4.6x SELECT 1
//	Add, one value, to a key ready already       236-274 µs   3.7-4.3x
//	Add from 8 goroutines, per Add                88-167 µs
//	a caller's INSERT in its transaction         257-337 µs
//	the same INSERT and an AddTx                  388-463 µs
//	Claim of one key, 100 values over 10 keys     389-462 µs
//	Claim of one key, 10^6 values, 10^5 keys      374-414 µs   0.81-1.06x the above
//
// An Add is one statement in its own transaction: one round trip, and a
// commit that waits for the disk, which is most of its time. River's
// single insert, measured the same way on this kind of machine, takes
// about 840 µs against 113 µs for a SELECT 1 (7.4x). AddTx is one
// statement inside the caller's transaction, with no round trip of its
// own beyond it and no savepoint (TestRunnerAddTxRoundTrips counts them). A
// Claim reads the ready keys through a partial index in ready order, so
// its cost follows the keys that are ready, not the backlog behind them.
//
// # Throughput
//
// TestMeasureThroughput (PACER_BENCH=1), end to end: 20,000 values over
// 1,000 keys, 20 each, worked by 2 OS processes of a pacer Runner with 4
// workers each, strict mode (MaxBatch 1: one handler call and one Ack per
// value), a no-op handler, on a local PostgreSQL 15 (fsync and
// synchronous_commit on) on a 2-core machine shared with other work (load
// average 3 to 6), rounds of the code before the shared Acks and of this
// one taken in turn. Before: 2,610-3,470 values/s in 5 rounds, with 360-420
// µs of server CPU and 125-150 µs of client CPU per value. Now: 4,490-8,050
// values/s (6,680, 4,490, 7,480, 8,050, 7,350), with 133-143 µs of server
// and 55-57 µs of client CPU per value; the SELECT 1 round trips of the
// same rounds, from 8 goroutines, ran at 31,600-45,900 a second, so a value
// costs 4 to 8 of them. Flights carry 3 to 4 Acks, one per worker, and
// commit about once per flight: the work is bound by the CPU that the two
// processes and the server share with each other and with the machine's
// other work (190 µs of CPU per value leave at most about 10,000 values/s
// to 2 idle cores), and by the time a commit waits for the disk, once per
// flight per process.
//
// With pacer's Config.AckInBackground, a worker takes its next batch
// while its Ack commits, and the Acks of the workers that no longer wait
// for them share larger flights: in rounds taken in turn with those
// without it (load average about 2), 8,090-13,910 values/s, all but one
// over 13,300, with 85-88 µs of server and 29-32 µs of client CPU per
// value, against 6,070-6,990 (152-172 µs and 60-69 µs) without it.
//
// 12 more rounds at load average under 1: 6,240-7,380 values/s, 11 of
// them at 6,500 or more. 17 before those (load average 0.2 to 2.2):
// 4,810-7,470 values/s, 8 of them at 6,500 or more, with 142-212 µs of
// server and 58-88 µs of client CPU per value: the same work took up to
// half as much CPU again from one round to the next, at a load average
// under 2. A profile of the server (perf) spreads that CPU over the
// executor's start and run of the two statements of a flight (about 30%),
// the commit and its fdatasync (7%) and the network (13%), with no single
// hot spot; connecting without TLS changed nothing measurable. Nor did
// the notifications, which a busy Store sends every 5 ms (see Wake-ups)
// and every listening process receives: in rounds taken in turn, 8 of
// each, with 500 ms between them (next to none) the rounds ran at
// 5,740-7,110 values/s (6,510 on average), with 5 ms at 5,070-7,080
// (6,090); and 20 rounds of each with a Store that notified only while a
// Wait of any process slept, told by advisory locks, ran at 5,250-7,220
// (6,530) against 5,070-7,180 (6,370). Notifying only then would save
// the work with many processes, each of whose notifications every other
// receives; it is not done, since it would have each sleeping Wait keep
// a connection of its own.
//
// BenchmarkThroughput, the same backlog worked by 2 Stores of 4 workers
// each without a Runner, in turn with the code before (load average 5 to
// 8): a worker that ends each lease with FinishAndClaim and leases one key
// at a time, as a Runner's does, 7,030-7,770 values/s (before:
// 2,430-2,680); with four keys per Claim, 5,570-6,170 (3,510-3,910); a
// Finish and then a Claim, four keys per Claim, 3,890-4,660 (3,140-3,440);
// one key per Claim, 1,920-2,620 (2,430-2,780): its Claims commit alone,
// and its Finishes take turns in flights.
//
// # Wake-ups
//
// Workers sleep in Wait, and changes wake them by LISTEN/NOTIFY on the
// schema's channel, with the queue's name as payload, from every process.
// Add, Finish, Release and Redrive notify when they make a key ready
// sooner; they do so soon after their statement committed, from a
// goroutine of the Store that sends the notifications of all queues
// changed meanwhile in one statement, at most once per 5 ms (the first
// after a quiet spell at once): a Store whose changes keep coming wakes the
// Waits of every process, which costs the server and each listening
// process some work, at most 200 times a second. They do not notify inside
// their own statement, because a transaction that notifies holds a lock of
// the whole PostgreSQL cluster while it commits, so notifying writes would
// wait for the disk one at a time. AddTx does notify in its statement: only
// PostgreSQL knows when the caller's transaction commits.
//
// A Store listens on one connection of its own, taken from the pool for
// good by the first Wait (so it no longer counts against the pool's size)
// and closed by Close; its goroutine wakes the Waits of the queue named,
// and reopens the connection if it fails. Notifications are a hint on top
// of a poll: a Wait reads when the queue's next key is ready and sleeps
// until then or until d at most; and every Config.PollInterval the
// listening goroutine looks, on its own connection and in one statement,
// at the queues that the Store's Waits sleep on, and wakes those with a
// key ready, or due before its next look. So a lost notification only
// delays work, by PollInterval at most, and a Store whose workers all
// wait costs the server one statement per PollInterval, however many
// workers and queues it has: a Runner's idle workers leave one of them in
// Wait, which stays there until something is ready. (A look through the
// pool would cost two: pgxpool checks a connection that sat idle for a
// second with a round trip of its own before it lends it.) See Store.Wait
// for why a change made just before a Wait is not lost.
//
// # Server restarts
//
// While the server is down, every method fails with the error of the
// pool's connection, and a Runner's workers back off and resume by
// themselves once it is back (the listener reconnects too). What Add
// accepted survives a restart of the server, fast or immediate (a crash,
// as far as the data goes), since it was committed: a method returns nil
// only once it read the server's whole reply, since the server sends a
// statement's rows before the commit, which may then fail or be cut short
// (an immediate shutdown while the commit waits for the disk sends the
// rows and closes the connection). Such a method returns an error, and
// whether its change was made is unknown, as with any lost reply.
// TestPostgresRestart checks both kinds of restart on a server of its own,
// TestFailedCommitIsAnError a commit that fails after the row. A Runner
// cut off from the server by a partition (the connections open, no byte
// passing) stops its handler by its own clock, before another instance
// can lease the key (TestPartitionedHolderPostgres; see
// pacer.Config.LeaseTTL).
//
// # Names
//
// Keys are bytea: any string, of any length, as the store package says.
// A btree index entry holds at most about 2.7 kB, so the key rows are not
// indexed by the key but by its SHA-256, 32 bytes whatever the key's
// length, and the values name their key by it; a key is kept whole in its
// row (and in its dead letters, which index no key), and the statements
// that look up a caller's key compare it whole too. Keys of one queue are
// thus told apart by their SHA-256: two keys with the same one (no such
// pair is known, and finding one is believed infeasible) are never taken
// for each other, but cannot have values at once. While one has, Add,
// AddTx and a Redrive of the other return an error and change nothing,
// and its Release, Extend and Finish find nothing. sha256() needs
// PostgreSQL 11 or later.
//
// Queue names are text: they must be valid UTF-8 without NUL bytes, and
// methods return an error for others.
package pgstore
