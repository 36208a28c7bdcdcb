// Package redisstore keeps the state of pacer Runners in Redis (7.0 or
// later), so that Runners in several processes share one debounce, one
// ready order and one set of leases, and a crash of any of them loses
// nothing that Add accepted. A Store implements store.Store,
// store.DeadLetters, store.FinishClaimer, store.Inspector,
// store.Operator, store.PerKeyClaimer, store.KeyRateClaimer and
// store.FairTenants, and passes
// the store/storetest conformance suite.
//
//	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	s, err := redisstore.New(ctx, c, redisstore.Config{Prefix: "myapp"})
//
// # One function per operation
//
// Every operation (Add, Claim, Extend, Finish, Release, Stats,
// DeadLetters, Redrive and Purge, Keys, Key and Values, and PauseQueue,
// ResumeQueue, PauseKey, ResumeKey, RetryNow and DropKey) is one Lua
// function, called with FCALL,
// so one round trip that Redis runs atomically: the guarantees of package
// store hold across processes because no two calls interleave. The
// functions' code sits beside this file, in lua/, one script each with a
// header that lists its KEYS, ARGV and reply; lua/lib.lua holds the steps
// they share and describes the data model.
//
// The functions make up one Redis function library, which New loads into
// the server (into every master of a cluster), and a call loads again
// where it reports the library missing: after a restart without
// persistence, or on a new node. Its name, "pacer_" and a hash of its
// code, changes with the code, so processes that run different versions of
// this package each call their own; an old version's library stays in the
// server until FUNCTION DELETE removes it. The Store's Redis user must be
// allowed FUNCTION LOAD and FCALL. A function costs less to call than a
// script run with EVALSHA, which on Redis 7.0 sets up KEYS and ARGV as
// globals on every call, and the library defines the shared steps once,
// when it loads, where a script would define them on every call.
//
// Time is the server's: every function reads TIME, so processes whose
// clocks disagree still agree on deadlines, and so on one order. Times
// are kept in microseconds. Should the server's clock step back (a
// failover to a replica whose clock is behind), keys that become ready
// meanwhile go ahead of those that were ready before the step.
//
// # Add appends, the next call folds
//
// Add is the hot path, so it does the least it can: it appends its values
// to the queue's inbox (a list), with the server's time, and counts them
// in the queue's hash, in one function of three commands (TIME, RPUSH and
// HINCRBY). The count covers the inbox, so that an Add with
// store.AddParams.MaxValues checks its bound against every value stored,
// with one HGET more, in the same function call. Every other function
// that reads or changes the keys' values or state (Claim, Finish,
// FinishAndClaim, Release, Stats, Redrive, Keys, Key, Values) first folds
// the inbox into the keys, each Add
// as it would have been applied at its own time: its values join its
// key's list, each stamped with that time, and its key becomes ready, or
// its burst is due, as of that time. So the order, the debounce and the
// counts are those of Adds applied at once, and once Add returned, the
// values are in Redis: durability does not wait for the fold. A fold does
// at most 4,096 elements of the inbox (a larger single Add whole), and a
// function that finds more left replies so and is called again before it
// does its work, so that no call stalls the server for long: a backlog
// of n elements in the inbox folds in about n/4,096 calls.
//
// # Delayed values
//
// A value added with store.AddParams.Delay goes through the inbox as any
// other, its Add's params saying the delay; the fold stamps it with the
// time it is due beside the time it was added, and records in the key's
// hash the latest time a value of the key is due. A key whose first value
// is not due waits in the sorted set of retried and deferred keys, as
// scheduled, until it is; a Claim of a key with a recorded time reads the
// batch's values to stop before the first that is not due, and a Finish
// that leaves such a key values reads its first one. Once the recorded
// time passed, the next of those drops it. So values without a Delay, and
// keys that never had one, cost what they did: the Claim and the Finish
// read one field more of the key's hash, in the command they send anyway.
//
// # Several batches of one key
//
// A Claim with store.ClaimParams.PerKey > 1 may lease up to PerKey
// batches of one key at once, with the semantics of store.PerKeyClaimer.
// A key that such a Claim leases goes into multi mode: its hash keeps the
// batches out on a lease or kept to be leased again (each with its values'
// count, fence, attempt, lapse, holder and error) and the key's own
// state in one field, packed with Lua's struct (no JSON), and the key
// stands in the one sorted set its batches call for: ready while it may
// take another lease, else leased until its first lease lapses or held.
// A Claim or Finish of it reads that field in one HMGET (a Finish with
// PerKey > 1 in the one that checks its lease) and writes it in one HSET;
// the function library keeps what it last wrote of up to 1,024 keys,
// decoded, so the next call on such a key does not decode it again, and
// one that finds the field changed (by another version's functions,
// during an upgrade) decodes it afresh. It leaves multi mode when no
// batch of it is left, unless it is ready and was last leased by a Claim
// with PerKey > 1: such Claims leasing one batch of it at a time do not
// take it in and out with each.
// So a key leased with PerKey 0 or 1 costs what it did: its Claim reads
// one field more in the command it sends anyway, and a Finish or Extend
// finds a key in multi mode from the state field it reads anyway. A key
// in multi mode costs O(PerKey) more a call, a Finish of a batch behind
// its first O(the values before it) more; Stats visits the keys in multi
// mode, which may be all the ready keys that Claims with PerKey > 1
// lease. A key in multi mode as unreleased versions wrote it (its
// batches as JSON) is not read. Keys that one Claim leases and that may
// lease again go back in the ready order a microsecond apart, in the
// order it leased them.
//
// # A rate per key
//
// A Claim with store.ClaimParams.KeyRate keeps a GCRA bucket per key, with
// the semantics of store.KeyRateClaimer, in the call that leases: a key's
// theoretical arrival time T is a field of its hash, which the Claim reads
// in the HMGET it sends anyway and the lease writes in its HSET, so a key
// leased with the rate before costs no command more. A call that deletes
// the hash (the key emptied) while T has not passed keeps T in the
// queue's sorted set rates, which a Claim reads, in one ZMSCORE for all
// the keys it popped, for keys whose hash has no T; an entry goes 10 s
// after its T passed, with the next call that adds one, and the set a day
// and 10 s after the last call that wrote it. A key without a token is
// deferred as a Finish with Defer would, and the Claim pops
// another in its place, up to 4 deferrals for each key it wants and 16
// more. Functions of versions before KeyRate neither read nor keep T: a
// key that one of them emptied finds its bucket full.
//
// # Finish calls share a function call
//
// FinishAndClaim runs Finish's steps, then Claim's, in one call: a
// Runner's worker ends its batch and leases its next one in one round
// trip, where a Finish and a Claim would take two. Beyond that, the
// Finish and FinishAndClaim calls of one queue that come while another's
// function call is on its way to Redis wait for it, and then share the
// next: it ends their leases in the order they came, then claims for all
// of them at once and gives each its share. Under load, when a Runner's
// workers finish batches faster than a round trip, one call serves
// several of them. The call about to send first yields its processor
// once, so that the goroutines ready to run, such as workers the call
// before just answered, go first and their calls join it: with the
// processors busy, fewer and larger calls; with one idle, a call that
// comes alone goes at once. The keys
// their leases leave with values go behind the keys already waiting
// before any of them claims, as they would if the calls ran one after the
// other.
//
// # Data model
//
// A queue's keys all start with "{Prefix:queue}:", in the name encoding
// below, so that the hash tag puts them in one slot of Redis Cluster. A
// queue has a few keys of its own: the inbox of Adds not folded yet,
// sorted sets of its keys by when they became ready, when their burst,
// retried batch or lease is due, and when they were held, the index of
// its keys (a sorted set of every key with values, ordered by the key's
// bytes), a hash of counters (the last fence, the values stored, the last
// dead letter), and the wake-up set of Wait. Each key with values has a
// list of its values (each prefixed with the time it was added) and a
// hash of its state (its fence, lease expiry, holder and when it was
// leased, attempts and the last failure's error, head batch size and open
// burst); both, and its member of the index, are deleted when the key's
// last value is acked or dropped, so that Redis holds what is active, not
// what happened. Fences come from the queue's counter, which outlives the
// keys. A dead letter is one list, kept until Redrive or Purge. An
// operator's pauses (see Operating) are a flag key of the queue and a set
// of its paused keys, which outlive the keys' values. Beside the
// queues, a Store's Prefix has one set of its own, the registry of its
// queues' names (see Inspection).
//
// A function declares in KEYS the names of its common path only (Add: the
// inbox and the wake-up set; Extend, Release, Key, RetryNow and DropKey:
// the key's hash; Values: the key's list; PauseQueue and ResumeQueue: the
// queue's pause flag; PauseKey and ResumeKey: the set of paused keys; the
// others: a set of the queue) and builds the names of the others from the
// queue's prefix; Redis Cluster runs such calls because every name has the
// queue's hash tag and so lives in the slot of the declared keys.
//
// # The name encoding
//
// A queue's keys start with Prefix and the queue's name, each escaped
// ("%" written "%25", ":" written "%3A", every other byte as it is),
// joined by ":" in braces, then ":". Prefix "P" and the queue "eu:orders"
// start "{P:eu%3Aorders}:", Prefix "P:eu" and "orders" start
// "{P%3Aeu:orders}:"; names without "%" or ":" read as they are,
// "{pacer:orders}:". So two Stores with different prefixes share no key,
// nor do two queues. That rests on three things: an escaped part holds no
// ":", so the ":" in the braces split them back into Prefix and queue;
// neither holds a brace (New and the calls refuse one), so the key's
// first "}" ends them; and what follows is one of the queue's own words,
// which hold no ":" (ready, inbox, meta, ...), or a letter and ":" before
// a key, a dead letter's id or a Wait's id (k:, v:, d:, w:), so the first
// ":" after the braces tells which. The braces are the keys' hash tag.
// The registry of queues is "{P}:queues", one part in its braces, so no
// queue's key. The limits and locks of packages redisrate and redismutex
// write three parts in their braces, the second "rate" or "lock", so none
// of their keys is a Store's either.
//
// # Tenants
//
// The first Add that names a tenant (store.AddParams.Tenant) turns the
// queue's tenants on, for good: a hash of the tenants' weights, which
// turns on the queue's features key too (see Operating), so a queue
// without tenants claims as before, with the same commands. With tenants, each tenant's ready keys are a sorted set of
// their own (the keys without a tenant stay in the ready set, as the
// tenant ""), and a sorted set of turns holds the tenants with ready keys
// by virtual time. Every step that puts a key in the ready order (the
// fold of an Add, a burst, delay or lapse that came due, a Finish that
// leaves values, a Release, RetryNow, ResumeKey) puts it in its tenant's
// set, read from the key's hash, and gives the tenant a turn if it had
// none. A Claim then pops, per key, the first tenant in turn and its
// oldest key, and moves the tenant on by 1/weight: O(log T + log K) per
// key in T tenants with turns and K ready keys, and no step visits every
// tenant, but Stats (and Queues), which count the ready keys tenant by
// tenant. A tenant's weight and virtual time stay in the queue's hashes
// for the life of the queue. KeyInfo.Ahead counts the keys ahead of the
// key in its tenant's set, and KeyInfo.TenantsAhead the tenants before
// its tenant in the turns that have keys in their sets, with those that
// would join the turns at the next Claim (the keys without a tenant, and
// the tenants of keys that came due), at the virtual time join gives
// them (see Key). The first Claim that advances several turns at once
// moves the turns and the weights out of Redis's listpack encoding, where
// each update scans the list, into its skiplist and hash table ones (it
// adds one long member and removes it; OBJECT ENCODING, asked once
// every 64 calls on a queue, tells it which it has, and a user whose ACL
// denies OBJECT keeps the listpacks, which only costs time). The rest of
// the data model is unchanged: lib.lua lists the keys.
//
// # Waiting
//
// An idle worker does not poll. An Add into an empty inbox, a Finish or
// Release that makes a key ready, a Redrive, and a Claim that leaves keys
// ready put a member in the queue's wake-up set (a sorted set that holds
// at most one), as does a change that makes a key due sooner than the
// waiting workers expect; Wait blocks on it with BZPOPMIN, and one blocked
// Wait takes each wake-up. An Add into an inbox that is not empty need not
// wake anyone: the wake-up of the Add that made it non-empty still stands,
// or the worker that took it has yet to claim, and that Claim folds this
// Add too. A Claim that leases keys while a key is due later (a burst, a
// delay, a lease's lapse, its own leases' included) wakes a waiting worker
// too: the claiming worker may have been the one timing that key, so
// another takes its place, and a crashed holder's batch is taken over on
// time.
//
// Redis checks the timeouts of blocking commands only hz times a second
// (every 100 ms by default), too coarse for a debounce. So Wait measures
// its own duration with a local timer, and uses BZPOPMIN only to hear
// about changes: it blocks on the queue's wake-up set and on a key of its
// own, in a goroutine of its own. When the timer fires, Wait returns at
// once, so that the worker claims without waiting for another round trip,
// and the pop is ended behind it, by a command that adds to the Wait's own
// key (Close waits for that); a pop that ends after its Wait returned and
// took the queue's wake-up gives it back, for another worker. A Wait of a
// millisecond or less only sleeps. An idle worker sends two commands every
// 30 s. Each blocked Wait holds one connection of the client's pool, and a
// Wait that ended on its timer holds it a round trip longer: size the pool
// (go-redis' Options.PoolSize, 10 per CPU by default) for the workers of
// every Runner on the client, plus the connections of the other calls.
//
// # Inspection
//
// Keys pages through the index of a queue's keys from its cursor (the last
// key read) with ZRANGE BYLEX, so a page costs O(log n) in the n keys of
// the queue plus O(1) per key it reads, whatever n is, and never a command
// over the queue or the keyspace: a prefix is a range of the index, and a
// state filter reads at most 1,000 keys, or Limit if more, then ends the
// page, short or even empty, with a cursor. Keys come in the order of
// their bytes. The index costs one command when the fold gives a key its
// first value, and one in the call that takes its last; nothing else.
//
// A queue filled by a version of this package without the index (or
// while one ran beside this one) is indexed again by the first Keys that
// finds the index's count disagreeing with the queue's count of keys, an
// O(1) check: it scans the queue's sorted sets and the index in calls of
// bounded work, O(n) in all. Keys remove from the index the keys they
// find without values as they go, so that a count that agrees by chance
// (as many keys missing as left behind) soon disagrees.
//
// Queues reads the registry of the Prefix's queues, a set in a slot of its
// own, which a queue's functions cannot write on Redis Cluster: a process
// adds a queue's name to it, in a command of its own, before its first
// Add or Redrive of that queue, and never again. A registry that does not
// say it is complete (a new one, or one lost with a server that restarted
// without persistence) is completed first, by a SCAN of every master for
// the queues' counters' hashes, 1,000 keys a step: once, O(keys of the
// server) in all. Then Queues costs O(queues) calls of Stats' function,
// which also reads the first value of the key at the front of the ready
// order.
//
// Key, and each key of a page, read the key's state as it is at the
// call's instant: a burst, retry, deferral or lease that came due is
// ready since it came due, before a Claim moved it. Values reads the
// first values of the key's list.
//
// # Operating
//
// PauseQueue sets a flag key of the queue, and PauseKey adds to a set of
// paused keys. Each of them, the first Add with a tenant and the first
// lease of a key in multi mode (PerKey) also sets the queue's features
// key, a sorted set of one member, in the same call. The claiming step
// pops the first ready keys with one ZMPOP over the features key and the
// ready set, which pops from the first of them that has members: in a
// queue that uses none of these, the common case, the Claim runs the
// commands it ran before any of them existed, and pays nothing for
// pauses, tenants or several leases of a key (but one EXISTS of the
// features key in a call that moves keys that came due into the ready
// order, or folds the Adds of more than 16 keys, which then read no
// tenant field). Otherwise it learns which
// of them the queue uses from one EXISTS, puts the features key back,
// and, the last of them gone, removes it: only a Claim removes it, in the
// call that found none of them, so a pause made through any process stops
// the next Claim of every other. A paused queue's Claim folds the inbox
// and leases nothing; the rest goes on (Adds, Finishes, Releases, the
// clocks of bursts and delays), and ResumeQueue wakes a waiting worker,
// whose Claim passes the wake-up on while keys are left ready, as every
// Claim does.
//
// PauseKey adds the key to the queue's set of paused keys, and sets it
// aside from the ready order if it is there: a sorted set of parked keys
// keeps each with the time it became ready. A paused key that comes ready
// later, by any path (its burst or delay comes due, a Finish leaves
// values, a lease lapses, a Release or a Redrive), enters the ready order
// as usual, and the Claim that pops it sets it aside and pops another in
// its place, so that no path into the ready order pays for pauses. Stats
// sets aside the paused keys it finds ready, so that it counts none of
// them as Ready, and visits the paused keys to do so. ResumeKey puts a
// key that is ready, set aside or not, at the tail of the ready order.
// RetryNow moves a retrying or deferred key from the delayed keys to the
// tail of the ready order (a paused one straight to the parked keys).
// DropKey folds the inbox, writes all the key's values to one dead letter
// and removes the key's state: the hash that held its lease's fence goes,
// so its holder's Extend and Finish find no lease.
//
// KeyInfo.Ahead, for a key that Key reads ready, counts in O(log n) with
// ZRANK and ZCOUNT: the keys before it in the ready order and those whose
// burst, delay or lapse came due before it, which a Claim would move
// ahead of it; less the paused keys among them, which it looks up one by
// one (with more than 1,000 keys paused, it leaves that out, and may count
// paused keys that came due and were not set aside yet).
//
// # Failures
//
// New checks the server before it returns, within its ctx: it dials it
// once and waits for PING's reply, reads its version (HELLO), and loads and
// calls the function library. A wrong address, a server older than 7.0,
// or a user not allowed FUNCTION LOAD or FCALL fails there, at once, with
// an error that names the address and what is missing:
// "redisstore: 127.0.0.1:6390: not reachable: dial tcp 127.0.0.1:6390:
// connect: connection refused". A wrong address fails at its first dial,
// whatever retries the client's options allow.
//
// The Store buffers nothing: an operation that cannot reach Redis returns
// the client's error, wrapped with "redisstore: ". The client's retry
// policy applies first: go-redis retries a failed command 3 times and a
// failed dial 5 times, about 1.7 s in all against a server that refuses
// connections; set Options.MaxRetries to -1 and DialerRetries to 1 to fail
// at once. A retry of a call whose reply was lost runs it twice: an Add
// then stores its values twice (delivery is at least once), and a Finish
// reports store.ErrLeaseLost for a lease it did end.
//
// Values that Add accepted survive any client process; that they survive
// the Redis server itself is up to its persistence (appendonly yes with
// appendfsync always loses nothing; everysec up to a second).
//
// A pacer Runner on a Store rides out an outage of Redis. Add returns the
// error at once (with the options above) and the value is not accepted,
// though an Add whose reply was lost may have stored it; the workers claim again after the Runner's Retry backoff,
// capped at its LeaseTTL; a handler whose lease was not renewed in time
// has its ctx cancelled with pacer.ErrLeaseLost by the Runner's own clock,
// before Redis could lease the key to another, whatever go-redis does with
// the renewal in flight (see pacer.Config.LeaseTTL), and its batch runs
// again. Once Redis is back the workers resume by themselves, at the end
// of their pause, which is at most LeaseTTL (go-redis, after PoolSize
// failed dials, probes the server once a second, which may add a second).
// TestRedisRestart stops and restarts a redis-server under a Runner that
// keeps adding: with a LeaseTTL of 1 s its workers resume about a second
// after Redis is back. TestMultiProcessKill kills one of three Runner
// processes with SIGKILL mid-batch: no value that Add accepted is lost,
// and only the batches the dead process had in flight run twice.
// TestPartitionedHolderRedis cuts a Runner off from Redis while its
// handler runs (a proxy that stops forwarding bytes, the connections left
// open), with and without Options.ContextTimeoutEnabled: its handler's
// ctx ends before another instance's handler starts the key.
// TestMultiProcessStoppedAfterClaim stops a Runner process with SIGSTOP
// between its claim and its handler, until its lease lapsed: continued,
// it runs and ends nothing of that lease.
//
// # Costs
//
// Add costs O(1). Folding an Add costs O(log n) in the keys of the queue
// (O(1) when its key has values already and it is ready at once); Extend,
// Finish and Release cost O(log n); Claim O(log n) per key it leases, per
// due key it moves into the ready order and per paused key it sets aside;
// Stats O(log n) plus O(1) per held, delayed or paused key; Purge runs one
// call per 1,000 dead letters; Keys O(log n) plus O(1) per key read; Key
// O(log n) (and O(1) per paused key for a ready key's Ahead, and with
// tenants O(1) per tenant ahead, up to store.MaxAhead, and per key that
// came due and is not moved yet, up to 3,000, for its TenantsAhead); Values
// O(limit); PauseQueue and ResumeQueue O(1); PauseKey, ResumeKey and
// RetryNow O(log n); DropKey O(log n) plus O(values) of the key; Queues
// O(queues) calls of Stats; the first Add or Redrive of a queue in a
// process, one command more. A Claim of a key with a value added with a
// Delay costs O(batch) more, and its Finish O(1). Each stored value
// carries 17 bytes of time, one added with a Delay 18 more;
// an Add waiting in the inbox, 4 elements more; each key, a member of the
// index.
//
// An Add is one round trip that runs three commands on the
// server. Figures, each against a PING of the same run, and the commands
// that reproduce them: BENCHMARKS.md at the repository root.
package redisstore
