// Package pacer paces work per key.
//
// Services that react to events often need the same few things: wait until a
// key goes quiet before acting on it, act on each key in turn and never twice
// at once, keep a key's messages in order, stay under a remote API's rate
// limit and back off when it answers 429, and only work inside a delivery
// window. pacer provides each of these as a small package that works alone,
// and a generic Runner that composes them.
//
// Which package for which need:
//
//	wait for a key to go quiet, then act once     debounce.Keyed
//	a de-duplicated, fair ready-queue of keys      fifo.Queue
//	ordered messages per key, one lease per key    fifo.Groups
//	one holder per key, in one process             mutex.Keyed
//	one holder per file, across processes          mutex.LockFile
//	a token bucket that obeys Retry-After          ratelimit.Bucket, ratelimit.Keyed, ratelimit.Transport
//	only inside working hours of a time zone       window.Schedule
//	a rate limit or a window per key in a Runner   pacer.Config.KeyLimit, pacer.Config.KeyWindow
//	up to N batches of one key at once             pacer.Config.PerKey
//	fair turns across tenants                      pacer.Config.Tenant, pacer.Config.TenantWeight
//	a value not ready before a time                pacer.Runner.AddAfter, pacer.Runner.AddAt
//	all of the above around one handler            pacer.Runner
//	the Runner's state shared by several processes  pacer.Config.Store, package store
//
// A [Runner] keeps its state in the process by default. With
// [Config.Store] it keeps it in a [store.Store] engine instead
// ([store.Memory] in the process, redis/redisstore in Redis, pg/pgstore in
// PostgreSQL), which several processes share. Changing that one field (and
// naming the queue, [Config.Name]) makes these hold across every instance:
//   - debounce, exclusivity, order, retries, held keys and dead letters;
//   - leases that lapse when their holder dies;
//   - a holder that stops by its own clock before its lease may pass to
//     another, even cut off from the engine (see [Config.LeaseTTL]);
//   - a fencing token per lease ([Fence]).
//
// Values are encoded with a [Codec], [JSON] by default; string and integer
// keys need no configuration.
//
// # Limits and windows per key
//
// Besides one [Config.Limiter] and one [Config.Window] for every key, a
// Runner takes a limit and a window of each key's own, which put a key
// aside rather than make a worker wait for it, so that one slow key never
// holds the workers of the others:
//   - [Config.KeyLimit], a [ratelimit.KeyGate]: [ratelimit.Keyed] in the
//     process, redis/redisrate's or pg/pgrate's Keyed shared by every
//     instance. A key whose bucket has no token is deferred until its
//     token is due; a [RetryAfter] from its handler pauses that key's
//     bucket alone.
//   - [Config.KeyRate], a rate per key that the engine keeps itself: with
//     a Store, the claim that leases a batch takes its key's token, and a
//     key without one is deferred in the store, at no round trip of its
//     own, across every instance ([store.KeyRateClaimer]). Use it for a
//     key's own pace; use KeyLimit for a bucket that other users of an
//     API share, or that a Retry-After must pause.
//   - [Config.KeyWindow], a function from key to [window.Schedule] (a
//     reminder's hours in its user's time zone; nil for none). A key
//     outside its window is deferred until it opens; a running call's ctx
//     ends at its close, and the batch is deferred to the next opening.
//
// A deferred batch uses no attempt, keeps its place at the head of its
// key (strict order holds), and goes back to the tail of the ready keys
// when its delay ends; with a Store the delay lives in the engine, so any
// instance may run it then. A batch runs once the Runner's Window and
// Limiter and the key's window and limit all let it: the key's window is
// looked at as soon as the batch is leased, the key's token is taken last,
// right before the call, so that no token is counted before the call it
// pays for (KeyRate's, with a Store, when the batch is leased). [Runner.Explain] tells until when a key waits for its token or
// its window, and [Stats].KeyLimited and KeyWindowed count the deferrals.
//
// Conventions:
//   - Every type that owns goroutines has a constructor and an idempotent
//     Close or Shutdown that waits for them.
//   - Every blocking call takes a [context.Context].
//   - Every time-dependent type takes a clock.Clock
//     (github.com/benbjohnson/clock) in its config, so tests can use a mock
//     clock or testing/synctest.
//   - What an operator reads marshals to JSON that reads as a person
//     expects, and back: [Stats], [DeadLetter], ratelimit.Stats and the
//     store's Stats, QueueInfo, KeyInfo, StoredValue and DeadLetter. Names
//     are snake_case, the names scripts and metrics use (in_flight,
//     rate_limit_wait_seconds); a duration is a number of seconds, its name
//     ending in _seconds; a time is RFC 3339 in UTC with the fraction of a
//     second it holds. A zero time means "none" and is left out, as are an
//     empty error and other fields whose zero means "none"; counts,
//     counters and durations are always there, 0 included. Bytes are
//     base64 (see package store).
//   - Docs state guarantees and costs in big-O; measured figures, with the
//     commands that reproduce them, are in BENCHMARKS.md at the repository
//     root.
package pacer
