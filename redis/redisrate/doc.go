// Package redisrate is a rate limit shared by every instance of a service:
// a token bucket kept in Redis (7.0 or later), paced by
// GCRA, with a pause that any instance can set and every instance obeys.
//
//	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	notion, err := redisrate.NewBucket(ctx, c, redisrate.BucketConfig{Rate: 3, Burst: 3, Name: "notion"})
//
// The names mirror package ratelimit's: NewBucket(BucketConfig) returns a
// *Bucket, NewKeyed(KeyedConfig) a *Keyed, as ratelimit.NewBucket and
// ratelimit.NewKeyed do, for the same ideas shared by every instance.
//
// A Bucket is a ratelimit.Limiter (Wait) and a ratelimit.Pauser
// (PauseFor), so it goes wherever a ratelimit.Bucket goes: a pacer
// Config.Limiter, a ratelimit.Transport, or both, the same value. A 429 or
// 503 with Retry-After that the Transport receives, or a handler's
// pacer.PauseAll, then pauses every instance, not just this one. Keyed is
// the per-key form (per-account limits): Keyed.For(key) is a
// ratelimit.Limiter and ratelimit.Pauser of one key.
//
// # One function per call
//
// Allow and Wait each call take.lua once, as a Redis function (FCALL): one
// round trip, which Redis runs atomically. It reads the server's clock
// (TIME), the bucket's theoretical arrival time (tat) and its pause in one
// MGET, and computes GCRA in whole microseconds: with interval = 1/Rate
// and span = Burst·interval, the event conforms at
//
//	at = max(now, pause end, tat + interval - span)
//
// If at - now is more than the caller accepts (0 for Allow, the time left
// before ctx's deadline for Wait), it refuses and writes nothing;
// otherwise it sets tat to max(tat, at) + interval and returns at - now.
// Wait then sleeps that long on one local timer, never polling. Pause runs
// pause.lua; a Wait whose ctx ends gives its turn back with release.lua.
// The scripts, with their KEYS and ARGV, are in lua/.
//
// The calls of one Bucket (or KeyLimiter) value share round trips when
// many come at once: up to 4 fly at a time, each alone, as above; the
// calls that come meanwhile wait for one of them to land, and then go
// together in one call of takes.lua, which takes their events in the
// order they came, each as take.lua would (flight.go). A caller alone, or
// a few, cost what they did; many at once cost the server one function
// call for several events. Keyed.Allow and Keyed.Wait, which build the
// key's bucket anew on each call, do not share; a KeyLimiter from
// Keyed.For does.
//
// Keyed.TakeKey (ratelimit.KeyGate, a pacer Config.KeyLimit) never waits:
// it calls try.lua, which takes the event only if at = now and otherwise
// returns at - now, writing nothing. The TakeKey calls of one Keyed value
// share round trips whatever their keys (tries.go): one flies at a time,
// alone; the calls that come meanwhile go together in one call of
// tries.lua, which reads the clock once, reads every bucket in one MGET,
// decides each call as try.lua would, in the order they came (a key that
// comes twice sees its first take), and writes each taken bucket once.
// Every key of a Keyed shares one hash tag, so a cluster runs the call on
// one node. PeekKey calls try.lua alone.
//
// The functions, with bucket.lua, the code they share, make up one Redis
// function library, "pacer_rate_" and a hash of its code, which NewBucket and
// NewKeyed load into the server (into every master of a cluster), and a
// call loads again where it reports the library missing: after a restart
// without persistence or FUNCTION FLUSH, or on a new node; then it calls
// again. Processes that run different versions of this package each call
// their own library, on the same keys; an old version's library stays in
// the server until FUNCTION DELETE removes it. The client's Redis user
// must be allowed FUNCTION LOAD and FCALL. A function costs less to call
// than a script run with EVALSHA, which on Redis 7.0 sets up KEYS and
// ARGV as globals on every call.
//
// # Guarantees
//
//   - Rate: every process on the same Redis, Prefix and Name shares one
//     bucket. The events that Allow and Wait let through, in all of them
//     together, conform to GCRA on the server's clock: at most Burst +
//     Rate·t in any span t, with the interval 1/Rate rounded to the
//     microsecond. A Wait returns at its turn on the server's clock or
//     later (its sleep starts when the reply arrives); the clocks of the
//     processes need not agree. Keyed gives the same per key.
//   - Pauses: Pause (PauseFor) holds the bucket in every process: every
//     Allow and Wait that reaches Redis after it is refused, or sleeps
//     until it ends. A pause only ever extends the current one, never
//     shortens it; setting or extending one empties the bucket, so that
//     at most min(Burst, Rate·d) events pass at once when a pause of d
//     ends. A Wait that took its turn before the pause and is sleeping in
//     another process goes at its turn: a process hears of a pause on its
//     next round trip. In the process, and Bucket or KeyLimiter value,
//     that set the pause, every Wait and Allow is held from the moment
//     Pause is called, even if Redis cannot be told: no Wait of that value
//     returns during the pause, and one whose turn falls in it takes a new
//     turn after it (a second round trip).
//   - Contexts: Allow, Wait and TakeKey check ctx first. A Wait whose
//     turn would come after ctx's deadline returns
//     ratelimit.ErrWouldExceedDeadline after one round trip, having taken
//     nothing; a call whose ctx ends while it waits to share a round trip
//     (see above) returns ctx.Err() without one, having taken nothing. A Wait whose ctx ends while it sleeps returns ctx.Err() after
//     one more round trip (at most one second, whatever ctx) that gives
//     its turn back, moving tat back by one interval, if the tat is still
//     the one it wrote (no turn was taken after it) and no pause is in
//     effect; otherwise, or if Redis
//     cannot be reached, the turn is lost: the bucket lets one event
//     fewer through, never one more. So is a turn whose reply never
//     arrived (ctx ended during the round trip, or the connection broke).
//   - Concurrency: every type is safe for concurrent use. None owns a
//     goroutine or needs Close; the client is the caller's.
//
// # Keys
//
// A Bucket has two keys, "{Prefix:rate:Name}:tat" and
// "{Prefix:rate:Name}:pause"; a Keyed's key k has "{Prefix:rate:Name}:tat:k"
// and "{Prefix:rate:Name}:pause:k". Both are strings of microseconds of the
// server's clock. The hash tag "{Prefix:rate:Name}" keeps each function's keys
// in one slot of Redis Cluster, so every function runs there; it also puts
// all the keys of one Keyed on one node of a Cluster (use several Names to
// spread them). Prefix (default "pacer") and Name must not contain braces;
// a key k may be any string.
//
// The braces are written in the name encoding: Prefix, "rate" and Name,
// each escaped ("%" written "%25", ":" written "%3A", every other byte as
// it is), joined by ":". Prefix "P" and Name "eu:rate:notion" give
// "{P:rate:eu%3Arate%3Anotion}", Prefix "P:rate:eu" and Name "notion"
// give "{P%3Arate%3Aeu:rate:notion}"; names without "%" or ":" read as
// they are, "{pacer:rate:notion}". So two buckets of different Prefix or
// Name share no key. That rests on three things: an escaped part holds no
// ":", so the ":" in the braces split them back into the three; no part
// holds a brace (NewBucket and NewKeyed refuse one), so the key's first "}"
// ends them; and what follows is "tat" or "pause", which hold no ":", or
// either and ":" before a Keyed's key, so the first ":" after the braces
// tells which, and a Bucket's keys are never a Keyed's. The stores of
// package redisstore write two parts in their braces, and the locks of
// redismutex "lock" as the second, so none of their keys is a bucket's.
//
// Nothing outlives its use by more than a second: each key expires at the
// first whole second of the server's clock past its time, the tat when the
// bucket is full again, the pause key when the pause ends. A write whose
// time stays in the key's second leaves the expiry as it is, which spares
// the server most of a busy bucket's updates of it. An idle key of a Keyed
// costs nothing in Redis, and a bucket whose keys expired starts full, as
// it would have been.
//
// # Failures
//
// NewBucket and NewKeyed check the server before they return, within their ctx:
// they dial it once and wait for PING's reply, read its version (HELLO),
// and load and call the function library. A wrong address, a server older
// than 7.0, or a user not allowed FUNCTION LOAD or FCALL fails there, at
// once, with an error that names the address and what is missing:
// `redisrate: 127.0.0.1:6390: not reachable: dial tcp 127.0.0.1:6390:
// connect: connection refused`. A wrong address fails at its first dial,
// whatever retries the client's options allow.
//
// A call that cannot reach Redis returns the client's error wrapped with the
// package, the call and the bucket: `redisrate: Allow on "notion": dial tcp
// 127.0.0.1:6379: connect: connection refused` (and `..., key "acct-42": ...`
// for a Keyed). The client's retry policy applies first: go-redis retries a
// failed command 3 times and a failed dial 5 times, about 1.7 s in all
// against a server that refuses connections; set Options.MaxRetries to -1
// and DialerRetries to 1 to fail at once. A take.lua retried after its
// reply was lost takes two turns: one event fewer, never one more.
//
// Allow fails closed by default: it answers false with the error, so an
// outage of Redis stops the events it guards. With BucketConfig.FailOpen it
// answers true with the error: the service keeps going, but while Redis is
// down nothing limits it, in any process (each lets every event through),
// and only the remote's own limits (429 with Retry-After, which a
// Transport turns into a pause of this process only) hold it back. Choose
// FailOpen when an unreachable limiter must not stop the service and the
// remote can take a burst.
//
// Wait returns the error whatever FailOpen says. It cannot pace without
// Redis, and a nil would let every waiter of every process go at once,
// without even spacing them, and look like a granted turn; with the error
// the caller decides. A pacer Runner backs off (Retry.Initial) and asks
// again, so its calls resume by themselves, paced, once Redis answers.
//
// Pause returns the error too; PauseFor, which has no ctx and no error,
// bounds its round trip by one second and keeps its error for Err. Either
// way the value it was called on holds its own calls for the pause.
//
// # Performance
//
// Allow and Wait make one round trip: an FCALL of take.lua, which makes
// the three calls a shared GCRA on the server's clock needs, TIME, MGET of
// the tat and the pause, and SET of the tat.
//
// Calls beyond 4 in flight share one FCALL of takes.lua (see flight.go);
// TakeKey calls beyond 1, one FCALL of tries.lua (see tries.go), which
// costs the server one TIME and one MGET for all, and a SET per key it
// took from.
// A key's expiry moves only when its time enters a new second (see Keys),
// so most writes keep it (SET with KEEPTTL). Figures, against a PING of
// the same run and against go-redis/redis_rate, and the command that
// reproduces them: BENCHMARKS.md at the repository root.
//
// Allow and Wait build their commands, and box the arguments, when the
// Bucket is made. Keyed.Allow builds its key's names and command on every
// call and does not share round trips; Keyed.For builds them once.
package redisrate
