// Package redisstore keeps the state of pacer Runners in Redis (7.0 or
// later), so that Runners in several processes share one debounce, one
// ready order and one set of leases, and a crash of any of them loses
// nothing that Add accepted. A Store implements store.Store,
// store.DeadLetters and store.FinishClaimer, and passes the
// store/storetest conformance suite.
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
// FinishAndClaim runs Finish's steps, then Claim's, in one script: a
// Runner's worker ends its batch and leases its next one in one round
// trip, where a Finish and a Claim would take two.
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
// Release, and FinishAndClaim for the key it ends) get all the names they
// touch in KEYS. Add, the hot path, gets the five it touches in its
// common case (a value ready at once), which saves about a tenth of a
// round trip over passing all twelve. Claim (FinishAndClaim's too),
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
// one blocked Wait takes each wake-up. A Claim that leases keys while a
// key is due later (a burst, a delay, a lease's lapse, its own leases'
// included) wakes a waiting worker too: the claiming worker may have been
// the one timing that key, so another takes its place, and a crashed
// holder's batch is taken over on time.
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
// A pacer Runner on a Store rides out an outage of Redis. Add returns the
// error at once (with the options above, in about 0.1 ms here) and the
// value is not accepted, though an Add whose reply was lost may have
// stored it; the workers claim again after the Runner's Retry backoff,
// capped at its LeaseTTL; a handler whose lease cannot be renewed for the
// TTL has its ctx cancelled with pacer.ErrLeaseLost, and its batch runs
// again. Once Redis is back the workers resume by themselves, at the end
// of their pause, which is at most LeaseTTL (go-redis, after PoolSize
// failed dials, probes the server once a second, which may add a second).
// TestRedisRestart stops and restarts a redis-server under a Runner that
// keeps adding: with a LeaseTTL of 1 s its workers resume about a second
// after Redis is back. TestMultiProcessKill kills one of three Runner
// processes with SIGKILL mid-batch: no value that Add accepted is lost,
// and only the batches the dead process had in flight run twice.
//
// # Costs
//
// Add, Extend, Finish and Release cost O(log n) in the keys of the queue
// (O(1) in the common Add); Claim O(log n) per key it leases and per due
// key it moves into the ready order; Stats O(log n) plus O(1) per held or
// delayed key; Purge runs one script per 1,000 dead letters. Each stored
// value carries 17 bytes of time.
//
// # Performance
//
// Measured on a 2-core virtual machine shared with other work (load
// average 3 to 7 during the runs), against a local Redis 7.0; each figure
// is a range over several rounds, and an operation is compared with a PING
// in the same run, which is the figure that counts on a shared machine.
//
// Add, one value ready at once (bench_test.go, go test -bench 'Ping|Add'
// -benchtime=5000x -count=4: alternating rounds of 64 Adds and 64 PINGs):
//
//	                          serial          8 in flight
//	PING                      22-94 µs        13-40 µs per call
//	Add, 1 value, Wait 0      1.7-2.1x PING   1.3-1.9x PING
//
// That is above the 1.2x and 1.8x aimed at. An empty Lua script already
// costs 1.05-1.2x a PING here, and Add's script runs four commands (TIME,
// RPUSH, HINCRBY, and HMGET, or a new key's two ZADDs), about 10 µs of
// the server's time; declaring five keys instead of twelve and pushing a
// single value without a table saved about a tenth of a PING.
//
// The other figures are tests that print them, run with PACER_BENCH=1
// (go test -run TestMeasure -v), each against a redis-server of its own:
//
//   - Throughput (TestMeasureThroughput): 20,000 values over 500 keys
//     added, then handled by 2 OS processes (the test binary run again)
//     of one Runner with 4 workers each and a no-op handler, timed from a
//     go signal to an empty store. Strict mode (MaxBatch 1, one call per
//     value): 9,100-16,300 values/s in 15 rounds at load average 6 to 7,
//     12 of them above the 12,600 aimed at, and 6,100-11,100 in 9 rounds
//     at 9 to 11. A value costs 1.03 scripts (a FinishAndClaim, and now
//     and then a Claim by a worker that found nothing) and about 25
//     commands run by the server (INFO commandstats); a Finish, then a
//     Claim shared by the idle workers, cost 1.6 scripts and 24 commands,
//     and ran at 7,600-9,600 and 5,400-9,700 values/s in rounds taken in
//     turn with these. Coalesce mode (a key's 40 values in one call):
//     120,000-410,000 values/s (110,000-290,000 in turn).
//   - Idle (TestIdleRunnerCommands, which always runs): an idle Runner with
//     2 workers sent 0 commands in 10 s (INFO commandstats delta); its
//     claim loop blocks in one BZPOPMIN of up to 30 s.
//   - Claim latency (TestMeasureClaimLatency): a Claim of one key from 10^6
//     values over 10^5 keys costs 1.00-1.10x one from 100 values, in 5
//     rounds of 1,920 Claims each (about 60-115 µs per Claim, 3-5 PINGs).
//   - Ready to handler start (TestMeasureReadyLag): 1,000 values added 3 ms
//     apart to an idle Runner with 2 workers, 3 rounds: p50 43-105 µs, p99
//     0.57-1.04 ms, max 2.8-5.4 ms.
//   - Debounce precision across instances (TestMeasureDebouncePrecision):
//     300 keys, each given three values 10 ms apart by two Runners in
//     turn, Wait 50 ms; every batch held all three values; handler start
//     minus the last Add's return minus Wait, 3 rounds: p50 0.8-1.0 ms, p99
//     3.0-10.9 ms, max 3.3-11.0 ms: within Wait + 5 ms at p99 in one round
//     of three.
package redisstore
