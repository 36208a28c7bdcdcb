// Package pgstore is a store.Store that keeps its state in PostgreSQL, on
// github.com/jackc/pgx/v5: the values waiting per key, bursts, leases,
// retries, held keys and dead letters live in the database that a service
// already runs, shared by all of its processes, and enqueueing can take
// part in the service's own transactions (AddTx, which a pacer Runner's
// AddTx calls). A Store implements store.Store, store.DeadLetters,
// store.FinishClaimer, store.TxAdder, store.Inspector, store.Operator,
// store.FairTenants, store.PerKeyClaimer and store.KeyRateClaimer, and
// passes the same
// conformance suite as store.Memory (store/storetest).
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
// keys by their hash, and the earlier statements then fail; 005 leaves
// the paused keys out of keys_ready, which the earlier claims then read
// no more): stop the
// processes of an earlier version before one of a later version migrates
// their schema.
//
// The schema holds:
//
//   - keys: a row per (queue, key) that has values or is paused, found by
//     the key's SHA-256 (see Names), with the key's place in the ready
//     order (ready_at), its lease (fence, leased_until, and, for an
//     operator, when it began and its holder), its head batch (kept whole
//     across a retry, a deferral or a lapse), attempt, open burst (first
//     value, deadline, and whether that is its max-wait deadline), whether
//     it is held and since when, the error of its head batch's last Retry
//     or Hold, and whether an operator paused it;
//   - messages: the values, a row each, in (queue, key's SHA-256, seq)
//     order;
//   - fences: the sequence that numbers every lease, so that a key's fences
//     keep growing after its row was removed and made again;
//   - dead_letters: the dropped batches, with the error, the attempt and
//     the time;
//   - counts: how many values each queue stores, for
//     store.AddParams.MaxValues, spread over rows (see below);
//   - paused_queues: the queues an operator paused;
//   - key_rates: the theoretical arrival time of the keys whose last
//     values a claim with a store.KeyRate leased lately, which outlives
//     their rows in keys (see below).
//
// Delayed values (store.AddParams.Delay, migration 006) are a column of
// their message rows, when each is due, NULL for every other value, and
// a column of their key's row, the latest such time (gate). A Claim looks
// for the first value that is not due only in a key whose gate has not
// passed, through a partial index that holds the delayed values alone,
// and a Finish that leaves such a key values makes it ready when its
// first value is due: values without a delay, and keys that never had
// one, cost what they did, but for the comparison of a NULL.
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
// with store.ErrLeaseLost. A partial index, keys_ready, orders the keys
// that are neither held nor paused by ready_at (a leased key by its
// lease's expiry), so a Claim reads
// the keys that are ready and stops at the first that is not: its cost
// follows the ready keys, not the values queued behind them.
//
// Plans: PostgreSQL makes the plan of a prepared statement once, after its
// fifth run, and keeps it until its tables are vacuumed or analyzed; a
// plan made while a new schema held a few keys, when reading them all was
// cheapest, would read the whole queue on every run as it grows, for as
// long as autovacuum is late. The statements leave the planner no such
// plan: they read keys_ready only from the start of a queue's range (or,
// for a claim's next ready key, from the first key it picked), up to a
// LIMIT, and reach every other row by its primary key, from rows
// already found, so that their plans read pages in proportion to the keys
// they touch, whatever the size they were made at
// (TestPlansMadeSmallStayBounded). This rests on statistics no further
// from the truth than a new table's: on those of a VACUUM or ANALYZE that
// found a drained queue's tables empty, every plan looks cheap, until
// autovacuum comes by again once the queue refills. And every Claim steps
// over the dead index entries at the head of the ready order, which the
// leases and Finishes since the last VACUUM of keys left (O(leases since
// then), once per Claim, in its pick), and which an open transaction
// anywhere in the database keeps from being cleaned.
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
// # Tenants
//
// Migration 008 adds the keys' tenant column, an index of each tenant's
// ready keys, a tenants table
// (weight, virtual time, and vtime, its place in the turns, NULL while
// the tenant has no key that can come ready) indexed by (queue, vtime),
// and pick_tenant, a function that takes one turn: it walks the tenants
// by that index, locking each with FOR UPDATE SKIP LOCKED, and takes the
// first that has a key ready and not paused, advancing its virtual time
// by 1/weight; it takes out of the turns the tenants it passes that have
// no key that can come ready. claim_lanes (below) calls it per lease. An
// Add that names a tenant puts the tenant back in the turns, from the
// larger of its own virtual time and the queue's clock (the smallest
// virtual time in the turns), in its own statement, and writes no tenant
// row when the tenant is in the turns already with that weight; Release
// does the same for a key held while its tenant left the turns.
//
// A Claim of n keys in a queue with tenants is one statement that takes
// the next n turns at once, as n calls of pick_tenant would: it locks the
// first n tenants in the turns with a key ready, counts each one's ready
// keys up to n, gives the turns to the n earliest start times among them
// (a tenant's j-th at its virtual time plus j/weight), leases as many of
// each tenant's oldest ready keys, and advances each tenant's virtual
// time once, by the keys it leased over its weight; it takes out of the
// turns the tenants it passed that have no key that can come ready.
// It walks the turns a tenant a step, in a recursive query of the
// statement whose every step reads the next turn in tenants_turns, locks
// its row and counts that tenant's ready keys in its index: a plan that
// follows the indexes whatever PostgreSQL knows of the tables. A tenant
// it passes with no key that can come ready leaves the turns by a call
// of tenant_leaves (migration 017), which most claims make for none.
// (Versions before this one walk the turns in tenant_turns, migrations
// 011 and 013, a function that runs a query a step, or in the statement
// with the count a condition of the step, and take the tenants out of
// the turns in a scan and an UPDATE of the statement; the functions stay
// in place for them.)
// O(n (log T + log K)), plus one step per tenant that comes first in the
// turns with keys that are all leased, delayed, debouncing or paused.
// The claims of a queue with tenants take turns: each takes a lock of
// the queue's turns (pg_advisory_xact_lock) in a statement of its own
// first, so that its claim statement's snapshot sees the turns the
// claims before it took, in every process. A Claim with PerKey > 1
// (claim_lanes, below) takes that lock too, in the same transaction and
// round trip, as does its flight of Acks. FinishAndClaim with an Ack
// shares the flights of Acks as in a queue without tenants, the flight
// taking that lock in the statement that ends its leases, after it locks
// their key rows (a claim holding the lock waits for no row), and not in
// a statement of its own.
//
// No ready key of a tenant is left out of the turns: a claim takes a
// tenant out of them only with its row locked FOR UPDATE, and only if a
// snapshot taken after that lock (in tenant_has_keys, migration 010, a
// VOLATILE function, which reads a snapshot of its own) shows it no key
// that can come ready; an Add that names a tenant, and a Release, read
// its row FOR KEY SHARE, so such a claim skips the tenant while they run,
// and they wait for such a claim's commit, then see the tenant out of the
// turns and put it back. The claims' other locks of tenant rows (FOR NO
// KEY UPDATE) let those of the Adds pass: an Add waits for no claim
// that only takes a turn of its tenant.
//
// A queue has tenants once an Add named one; a Store learns it from its
// own Adds, or asks the server, in a Claim, at most once a second while
// it has seen none: a queue without tenants claims as before, with that
// one query a second more. An Add without a tenant, in a queue with
// tenants, is the tenant "" (weight 1), but from a process that has not
// learned of the tenants yet, and a Redrive that makes a key, make keys
// outside the turns, which a Claim leases only when no tenant has a key
// ready. Key's KeyInfo.TenantsAhead walks tenants_turns as pick_tenant
// does, up to the key's tenant, and counts the tenants with a key ready
// and not paused (a key outside the turns comes after all of them).
//
// # Several leases of a key
//
// A Claim with store.ClaimParams.PerKey > 1 (migrations 009 and 014) runs
// a server-side function, lease_lanes, instead of the claim statement: it
// locks up to Keys ready keys at once, FOR UPDATE SKIP LOCKED as the
// statement does, lists the batches each may lease now, in Add order, and
// leases them round by round (each key's first, in the ready order, then
// each key's second, and so on), as if a key that takes a lease went back
// behind the keys already waiting, so one Claim may lease several batches
// of one key. In a queue with tenants it takes the keys one at a time
// instead, a tenant's turn per lease (claim_lanes, 009).
// Each batch of such a key, out on a lease or come back (a lapse, a
// Retry, a Defer, a Hold), is a row of lanes, keyed by (queue, key's
// SHA-256, fence), with its range of values, its attempt, deadline,
// holder and error; the key row keeps the values never leased from its
// head, how many lanes and values of lanes the key has, the latest
// deadline of those out, and when a lease was last taken or ended, and is
// ready as store.PerKeyClaimer says. Its row shows no lease to the
// statements of a key of one lease: the claim statement and Release's
// skip it, and a Finish or an Extend whose statement found no lease tries
// the lane of the lease's fence, in a function of its own
// (finish_lane, extend_lane), in one more round trip. So a key of one
// lease runs the statements it ran before, and pays nothing for lanes but
// a comparison of a column; a lease of a lane pays a round trip more per
// Finish and Extend. The Acks of FinishAndClaims with PerKey > 1 share
// flights as the others do (migrations 012 and 014): one function call,
// ack_lanes, ends the flight's lanes, never waiting for a key row, and
// lease_lanes leases as many batches as those Acks want, in the same
// round trip and commit. Each runs two set-based statements, whatever the
// number of leases (the first locks the key rows, the second reads their
// lanes, changes them and settles the rows, in a snapshot taken after the
// locks): O(Keys log K + the lanes of the keys locked + the values
// leased) for lease_lanes, O(the lanes of the keys + the values acked)
// for ack_lanes, as the statements of keys of one lease, but that each
// lease also writes a row of lanes, and each Ack removes one. Their plans
// are made once per session and read rows by index only, reached from
// the keys they lock, so they stay bounded as a queue grows.
// Once its last lane ends, a key is a key of one lease again.
// The Store calls them through lease_free_lanes_v2 and ack_last_lanes_v2
// (migration 018; lease_free_lanes and ack_last_lanes of 016 by fewer
// steps), which lock the same rows and handle the common cases with a
// shorter statement of their own, writing the same rows: a claim whose
// keys locked have no lane and no lease, and an Ack that ends a key's
// only lane; any other case runs lease_lanes or ack_lanes, after one more
// statement that locks the same rows again.
//
// # A rate per key
//
// A Claim or FinishAndClaim with a store.KeyRate that is on (migration
// 015) keeps it in its own statement, with no statement of its own. Each
// key's theoretical arrival time T (GCRA, see store.KeyRate) is a column
// of the key's row, written by the UPDATE that leases the key, and, from a
// lease of the key's last values on (which alone can leave the key empty,
// and its row gone), a row of key_rates too, by (queue, key's SHA-256),
// which a key's next row reads until a lease writes its own; no T is a
// full bucket. A claim locks the first ready keys as a claim without a
// KeyRate does and reads their T; those without a token it defers until
// their tokens are due, T - (Burst-1)*Interval, as a Finish with Defer
// would leave them (a key of one lease keeps the batch a lease would take
// now at its head, with no lease, fence or attempt taken), in the UPDATE
// that leases the others, and it leases as many keys with a token in
// their place, after them in the ready order; the keys without a token
// that this second walk steps over, a later claim defers. In a queue with
// tenants, a tenant's keys without a token are stepped over, and those
// among its first deferred, by the claim that takes its turns: a deferred
// key takes no turn. The claims of keys of lanes (lease_lanes_rated and
// claim_lanes_rated) give each key as many leases as it has tokens, one a
// lease, and write T to key_rates at each. A Claim without a KeyRate runs
// the statements it ran before, which neither read nor write T; the Acks
// of a shared flight share its claim only with the same KeyRate. Key and
// Keys tell a key deferred for its token (store.KeyInfo.ForToken) by its
// ready time, which is T less the tolerance kept beside T.
//
// key_rates is UNLOGGED: its writes cost no WAL, and a crash of PostgreSQL
// (not a clean shutdown or restart) empties it, as it does an unlogged
// table on a standby that is promoted, which leaves the buckets of the
// keys that emptied full: each may then take up to Burst leases at once,
// as after a quiet time (the T of keys that have values lives in their
// rows, which a crash keeps). AddTx, which reads and writes no T, is not
// concerned. DropKey forgets a T that only the key's row held. A row of
// key_rates whose T passed says no more than no row, and each Store
// removes those of a queue at most once a minute, before a claim of the
// queue with a KeyRate, in one statement that reads the queue's rows of
// key_rates: the table holds about the keys that emptied in the last
// minute and Burst*Interval. A rated claim costs, over one without, the
// writing of T in the row it writes anyway, a read of key_rates per key
// whose row has no T, and an upsert per lease of a key's last values (see
// BENCHMARKS.md).
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
// # Costs
//
// An Add is one statement in its own transaction: one round trip, and a
// commit that waits for the disk, which is most of its time. AddTx is one
// statement inside the caller's transaction, with no round trip of its
// own beyond it and no savepoint (TestRunnerAddTxRoundTrips counts them).
// A Claim reads the ready keys through a partial index in ready order, so
// its cost follows the keys it reads and leases, not the backlog behind
// them: O(k log n) for k keys of a queue of n. The Acks of a flight share
// one statement and one commit. Figures, each against a SELECT 1 of the
// same run, end-to-end throughput with and without
// pacer.Config.AckInBackground, and the commands that reproduce them:
// BENCHMARKS.md at the repository root.
//
// # Inspection
//
// What an operator reads (store.Inspector) comes from the same rows, and
// changes nothing. Each call is one statement that reads a bounded number
// of rows through an index, but Queues, which counts as Stats does:
//
//   - Keys pages a queue's keys in the order of the primary key, by their
//     SHA-256: an order that the claims and finishes keep up already. A
//     cursor is a hash, a place in that order, so it stays valid while
//     keys come and go, and a key that holds values all along is shown
//     once. A page reads the keys in order from the cursor, and stops at
//     Limit+1 that match: O(log n + Limit) for a queue of n keys without a
//     filter, and for the held and the retrying keys, which have indexes
//     of their own in that order. With another state, or a prefix, a page
//     stops after 2,000 keys read, and is then short, or empty, with a
//     Next: O(log n) and at most 2,000 rows per page, however few keys
//     match.
//   - Key reads one key row by its primary key, Values a key's first
//     values by theirs: O(log n) and O(log n + limit). A key's Oldest is
//     its first value's time, read by the primary key too.
//   - Queues finds the queues with keys or dead letters by one read of an
//     index per queue, O(q log n) for q queues, then counts each queue as
//     Stats does, visiting every key of it, in statements sent in one
//     round trip; a queue's Oldest is its first ready key's, read from the
//     start of the ready order.
//
// Keys are not paged in their own order, as store.Memory pages them: an
// index in that order would take an entry from every update that moves a
// key in the ready order (a Claim, an Extend, a Finish that leaves
// values), which PostgreSQL cannot make in place of the row's page, so
// that every claim and finish would pay for the pages an operator reads
// (BENCHMARKS.md has the figures). A prefix is thus a filter of the keys
// read, not a range of an index. The indexes of the held and the retrying
// keys take an entry from a Hold or a Retry only.
//
// The statements of Keys, Key, Values and Queues' list are planned at each
// call, where the others are prepared and keep their plan (see Plans
// above): a plan made while a queue was small could read a large one
// whole.
//
// The columns that say since when a key is leased or held came with
// migration 004: a key leased or held before it shows no Since until its
// next lease or hold.
//
// Key also counts, for a ready key, the keys ahead of it in the ready
// order: a read of keys_ready from the start of the queue that a LIMIT
// stops at store.MaxAhead, O(log n + min(ahead, MaxAhead)).
//
// # Operation
//
// What an operator steers (store.Operator) is kept in the schema, so that
// it holds for every process, and each call is one statement:
//
//   - A paused queue is a row of paused_queues. Every claim statement reads
//     that table by its primary key, once: a row there and the statement
//     leases nothing, and says never for the next key, as does Wait's look
//     at the queue, so that Waits sleep until ResumeQueue notifies them.
//   - A paused key is a key row with paused set, which keys_ready leaves
//     out (migration 005): no claim reads a paused key, however many are
//     due, and no Wait wakes for one. Its row goes on as its values say
//     (its ready_at included), so that ResumeKey only puts it back in the
//     ready order: at the tail if it came ready meanwhile, else at its own
//     time. A paused key keeps its row while it holds no values, empty,
//     until it is resumed; such a row is counted in Stats.PausedKeys
//     alone, and shown by Key only.
//   - RetryNow moves the key's ready_at to now, at the tail of the ready
//     order.
//   - DropKey locks the key's row, moves its values to one dead letter,
//     takes them off the queue's count, and removes the row, or empties it
//     if the key is paused: a lease that was out is gone with it, and its
//     holder's Extend and Finish find no lease of their fence.
//
// ResumeQueue, ResumeKey and RetryNow wake the Waits of every process, as
// an Add does (see Wake-ups). None of them waits for a handler, only, for
// a moment, for a statement that holds the key's row.
//
// # Wake-ups
//
// Workers sleep in Wait, and changes wake them by LISTEN/NOTIFY on the
// schema's channel, with the queue's name as payload, from every process.
// Add, Finish, Release and Redrive notify when they make a key ready sooner;
// they do so soon after their statement committed, from a goroutine of the
// Store that sends the notifications of all queues changed meanwhile in one
// statement, at most once per 5 ms (the first after a quiet spell at once): a
// Store whose changes keep coming wakes the Waits of every process, which
// costs the server and each listening process some work, at most 200 times a
// second. They wake the Store's own Waits at once, in the process, without
// waiting for that statement. Notifying only while a Wait of some process
// sleeps would save that work where many processes listen; it is not done,
// since each sleeping Wait would then keep a connection of its own. They do not notify inside their
// own statement, because a transaction that notifies holds a lock of the
// whole PostgreSQL cluster while it commits, so notifying writes would wait
// for the disk one at a time. AddTx does notify in its statement: only
// PostgreSQL knows when the caller's transaction commits.
//
// A Store listens on one connection of its own, taken from the pool for
// good by the first Wait (the pool may open another in its place) and
// closed by Close; its goroutine wakes the Waits of the queue named,
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
