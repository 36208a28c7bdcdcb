// Package redisstore keeps the state of pacer Runners in Redis (7.0 or
// later), so that Runners in several processes share one debounce, one
// ready order and one set of leases, and a crash of any of them loses
// nothing that Add accepted. A Store implements store.Store and
// store.DeadLetters, and passes the store/storetest conformance suite.
//
//	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	s, err := redisstore.New(c, redisstore.Config{Prefix: "myapp"})
//
// # One script per operation
//
// Every operation (Add, Claim, Extend, Finish, Release, Stats, and
// DeadLetters, Redrive and Purge) is one Lua script, run with EVALSHA, so
// one round trip that Redis runs atomically: the guarantees of package
// store hold across processes because no two scripts interleave. The
// scripts sit beside this file, in lua/, each with a header that lists its
// KEYS, ARGV and reply; lua/lib.lua describes the data model.
//
// Time is the server's: every script reads TIME, so processes whose clocks
// disagree still agree on deadlines, and so on one order. Deadlines are
// kept in microseconds. Should the server's clock step back (a failover to
// a replica whose clock is behind), keys that become ready meanwhile go
// ahead of those that were ready before the step.
//
// # Data model
//
// A queue's keys all start with "{Prefix:queue}:", so that the hash tag puts
// them in one slot of Redis Cluster. A queue has a few keys of its own:
// sorted sets of its keys by when they became ready, when their burst,
// retried batch or lease is due, and when they were held, a hash of
// counters (the last fence, the values stored, the last dead letter), and
// the wake-up set of Wait. Each key with values has a list of its values
// (each prefixed with the time it was added) and a hash of its state (its
// fence, attempts, head batch size and open burst); both are deleted when
// the key's last value is acked or dropped, so that Redis holds what is
// active, not what happened. Fences come from the queue's counter, which
// outlives the keys. A dead letter is one list, kept until Redrive or
// Purge.
//
// Scripts that work on a key known to the caller (Extend, Finish,
// Release) get all the names they touch in KEYS. Add, the hot path, gets
// the five it touches in its common case (a value ready at once), which
// saves about a tenth of a round trip over passing all twelve. Claim,
// Stats and the dead-letter scripts find the keys they touch as they run,
// so they build those names from the queue's prefix, as Add's rarer cases
// do; Redis Cluster runs such scripts because every name has the queue's
// hash tag and so lives in the slot of the declared KEYS.
//
// # Waiting
//
// An idle worker does not poll. Add, Finish, Release, Redrive and a Claim
// that leaves keys ready put a member in the queue's wake-up set (a sorted
// set that holds at most one), when the change may make a key ready sooner
// than the waiting workers expect; Wait blocks on it with BZPOPMIN, and
// one blocked Wait takes each wake-up. A Claim whose lease would lapse
// before anything else is due wakes a worker too, so that a crashed holder's
// batch is taken over on time.
//
// Redis checks the timeouts of blocking commands only hz times a second
// (every 100 ms by default), too coarse for a debounce. So Wait measures
// its own duration with a local timer, and uses BZPOPMIN only to hear
// about changes: it blocks on the queue's wake-up set and on a key of its
// own, and when its timer fires, or its ctx ends, a second command adds to
// that key to end the pop. A Wait of a millisecond or less only sleeps.
// An idle worker sends two commands every 30 s. Each blocked Wait holds
// one connection of the client's pool: size the pool (go-redis'
// Options.PoolSize, 10 per CPU by default) for the workers of every Runner
// on the client, plus the connections of the other calls.
//
// # Failures
//
// The Store buffers nothing: an operation that cannot reach Redis returns
// the client's error, wrapped with "redisstore: ". The client's retry
// policy applies first: go-redis retries a failed command 3 times and a
// failed dial 5 times, about 1.7 s in all against a server that refuses
// connections; set Options.MaxRetries to -1 and DialerRetries to 1 to fail
// at once. A retry of a script whose reply was lost runs it twice: an Add
// then stores its values twice (delivery is at least once), and a Finish
// reports store.ErrLeaseLost for a lease it did end.
//
// Values that Add accepted survive any client process; that they survive
// the Redis server itself is up to its persistence (appendonly yes with
// appendfsync always loses nothing; everysec up to a second).
//
// # Costs
//
// Add, Extend, Finish and Release cost O(log n) in the keys of the queue
// (O(1) in the common Add); Claim O(log n) per key it leases and per due
// key it moves into the ready order; Stats O(log n) plus O(1) per held or
// delayed key; Purge runs one script per 1,000 dead letters. Each stored
// value carries 17 bytes of time.
//
// # Benchmarks
//
// bench_test.go measures each operation against a PING in the same run, in
// alternating rounds of 64 calls, so that both see the same machine; the
// ratio (x-ping) is the figure that counts. On a 2-core virtual machine
// shared with other work, against a local Redis 7.0, with go test -bench .
// -benchtime=5000x -count=3:
//
//	                          serial          8 in flight
//	PING                      23-35 µs        13-20 µs per call
//	Add, 1 value, Wait 0      1.7-2.0x PING   1.7-1.8x PING
//
// The script that Add runs costs about as much as the round trip itself:
// four commands (TIME, RPUSH, HINCRBY, HMGET; a new key's ZADDs instead of
// HMGET). In the same runs a three-command enqueue script in asynq's manner,
// with the time passed in by the client, cost 1.4-1.6x serial and
// 1.3-1.5x with 8 in flight, and an empty script 1.15-1.25x serial.
package redisstore
