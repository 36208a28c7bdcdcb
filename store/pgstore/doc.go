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
// run in one transaction under an advisory lock of the schema, so that
// processes that start at once take turns and the later ones find nothing
// to do. Once the schema is up to date New only reads it, so a role without
// the right to create tables can use a schema migrated by another.
//
// The schema holds:
//
//   - keys: a row per (queue, key) that has values, with the key's place in
//     the ready order (ready_at), its lease (fence, leased_until), its head
//     batch (kept whole across a retry, a deferral or a lapse), attempt,
//     open burst (first value, deadline) and whether it is held;
//   - messages: the values, a row each, in (queue, key, seq) order;
//   - fences: the sequence that numbers every lease, so that a key's fences
//     keep growing after its row was removed and made again;
//   - dead_letters: the dropped batches, with the error, the attempt and
//     the time.
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
// Every operation is one statement, one round trip, committed before it
// returns (with the server's synchronous_commit, durable then). Time is the
// server's: statements read statement_timestamp(), never the client's
// clock, so processes whose clocks disagree agree on deadlines.
//
// FinishAndClaim is the exception: it runs Finish's statement, then
// Claim's, in one transaction, begun with them in one round trip and
// committed in a second, or rolled back when the lease was lost. The
// Claim's statement reads a snapshot taken after the Finish's, so it
// leases exactly what a Claim right after the Finish would, with the same
// care for values added meanwhile. A value handled with a Finish and then a
// Claim costs two commits, where a worker that ends its batch and claims
// its next with FinishAndClaim (as a Runner's does) commits once.
//
// # Throughput
//
// BenchmarkThroughput: 20,000 values over 1,000 keys, one value per lease,
// worked by 2 Stores of 4 workers each with a no-op handler, on a local
// PostgreSQL (fsync on) on a 2-core machine shared with other work (load
// average 4 to 7), rounds of the two ways taken in turn. One key per Claim:
// 1,840-2,050 values/s with a Finish and then a Claim (4 rounds),
// 2,100-2,580 with FinishAndClaim (4 rounds). The gain is less than the
// commits saved, since PostgreSQL and the workers share the 2 cores. Four
// keys per Claim, where FinishAndClaim ends only the last of a worker's 4
// leases: 3,040-4,020 and 3,400-3,690 (2 rounds each). The rounds follow
// the machine's load: at load 7 to 10, a Finish and then a Claim ran at
// 680-1,560 values/s with one key per Claim.
//
// # Wake-ups
//
// Workers sleep in Wait, and changes wake them by LISTEN/NOTIFY on the
// schema's channel, with the queue's name as payload, from every process.
// Add, Finish, Release and Redrive notify when they make a key ready
// sooner; they do so right after their statement committed, from a
// goroutine of the Store that sends the notifications of all queues
// changed meanwhile in one statement. They do not notify inside their own
// statement, because a transaction that notifies holds a lock of the whole
// PostgreSQL cluster while it commits, so notifying writes would wait for
// the disk one at a time. AddTx does notify in its statement: only
// PostgreSQL knows when the caller's transaction commits.
//
// A Store listens on one connection of its own, taken from the pool for
// good by the first Wait (so it no longer counts against the pool's size)
// and closed by Close; its goroutine wakes the Waits of the queue named,
// and reopens the connection if it fails. Notifications are a hint on top
// of a poll: a Wait reads when the queue's next key is ready, sleeps until
// then or until d at most, and never longer than Config.PollInterval, so a
// lost notification only delays work. See Store.Wait for why a change made
// just before a Wait is not lost.
//
// # Names
//
// Keys are bytea: any string, as the store package says. Queue names are
// text: they must be valid UTF-8 without NUL bytes, and methods return an
// error for others.
package pgstore
