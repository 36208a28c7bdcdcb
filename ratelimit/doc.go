// Package ratelimit paces calls to remote APIs: token buckets that obey
// Retry-After, one bucket per key, limiters combined, and an
// http.RoundTripper that waits, pauses and retries.
//
// Which type for which need:
//
//	one limit shared by every caller (a remote API's quota)   Bucket
//	one limit per account, user or tenant                     Keyed, Keyed.For
//	one limit per key that says "later" instead of waiting    KeyGate (Keyed, redisrate.Keyed, pgrate.Keyed)
//	several limits at once (per account AND global)           All
//	pace an http.Client and obey 429/503 Retry-After          Transport
//	hand a 429/503 the Transport returned to a pacer Runner   CheckResponse, LimitError
//	read a Retry-After header safely                          HeaderRetryAfter, ParseRetryAfter
//	one limit, or one per account, shared by every instance   redisrate.NewBucket, redisrate.NewKeyed
//
// Limiter (Wait) is what the rest of pacer consumes; Pauser (PauseFor) is
// how a Retry-After reaches a limiter. Bucket and Keyed.For implement both.
//
// Names: HeaderRetryAfter reads the Retry-After of a response's header and
// ParseRetryAfter parses one value, while pacer.RetryAfter, a different
// thing, marks a handler's error. Package redis/redisrate mirrors this
// package's names for the shared forms: NewBucket(BucketConfig) returns a
// *Bucket, NewKeyed(KeyedConfig) a *Keyed.
//
// # With a pacer Runner
//
// A bucket for a remote API goes in one of three places:
//
//   - pacer.Config.Limiter, when one handler call makes one request: the
//     Runner takes a token before each call;
//   - a Transport in the handler's http.Client, when a call makes several
//     requests: each request takes its own;
//   - both, the same value: no call starts before a token is there, and
//     the call's first request goes out on that token (see Transport), so
//     no request spends two.
//
// Wherever it is, the time spent waiting shows in the Runner's
// Stats.RateLimitWait. A handler hands a 429 or 503 that the Transport
// could not absorb to the Runner with CheckResponse: the Runner pauses its
// Limiter for every key and retries this one after the Retry-After.
//
// # Guarantees
//
//   - Rate: a Bucket lets at most Burst + Rate·t events through in any
//     span of length t (x/time/rate's token math); a Keyed does the same
//     per key, with its token interval rounded to the nanosecond. Given
//     times out of order, Keyed.AllowAt answers exactly as x/time/rate's
//     AllowN does (see Keyed), which may let more events through.
//   - Pauses: no Wait of a Bucket returns nil while a pause is in effect,
//     neither for waiters that arrive during it nor for those that were
//     already sleeping (they wake at the pause's end, not before). A pause
//     only ever moves later. Every pause empties the bucket, so after it at
//     most min(Burst, Rate·pause) events pass at once. Keyed.PauseKey is the
//     same per key (its sleepers notice a pause when they wake, then wait
//     for its end).
//   - Adaptive (BucketConfig.Adaptive): a pause that starts while none is in
//     effect multiplies the rate by Decrease, never below MinRate; it climbs
//     back by RecoverStep every RecoverEvery after the pause, up to Rate.
//   - Contexts: every Wait checks ctx first, fails at once if it could not
//     pass before ctx's deadline, and returns ctx.Err() if ctx ends while
//     waiting; in both cases the token it reserved is given back (it is
//     lost only if someone reserved behind it meanwhile).
//   - All never holds one limiter's token while sleeping for another's,
//     except for the one it sleeps on; see All for the algorithm.
//   - Memory: Keyed keeps a bucket only for keys used within IdleTTL of
//     being full again (or paused, or waited on), and gives the memory of
//     dropped keys back.
//   - HeaderRetryAfter and ParseRetryAfter never yield a negative wait or
//     one above their cap.
//   - Concurrency: every type is safe for concurrent use. None owns a
//     goroutine, so none needs Close; time comes from the Clock in each
//     config (default clock.New(), which works inside testing/synctest).
//
// # Performance
//
// Bucket's Allow and Wait cost about what golang.org/x/time/rate's do; a
// Keyed call is a map lookup under one mutex on top of that, O(1) in the
// number of keys, and none allocates in steady state. Figures, and the
// command that reproduces them: BENCHMARKS.md at the repository root.
package ratelimit
