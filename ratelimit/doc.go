// Package ratelimit paces calls to remote APIs: token buckets that obey
// Retry-After, one bucket per key, limiters combined, and an
// http.RoundTripper that waits, pauses and retries.
//
// Which type for which need:
//
//	one limit shared by every caller (a remote API's quota)   Bucket
//	one limit per account, user or tenant                     Keyed, Keyed.For
//	several limits at once (per account AND global)           All
//	pace an http.Client and obey 429/503 Retry-After          Transport
//	read a Retry-After header safely                          RetryAfter, ParseRetryAfter
//
// Limiter (Wait) is what the rest of pacer consumes; Pauser (PauseFor) is
// how a Retry-After reaches a limiter. Bucket and Keyed.For implement both.
//
// # Guarantees
//
//   - Rate: a Bucket lets at most Burst + Rate·t events through in any
//     span of length t (x/time/rate's token math); a Keyed does the same
//     per key, with its token interval rounded to the nanosecond.
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
//     being full again, and gives the memory of dropped keys back.
//   - RetryAfter never yields a negative wait or one above its cap.
//   - Concurrency: every type is safe for concurrent use. None owns a
//     goroutine, so none needs Close; time comes from the Clock in each
//     config (default clock.New(), which works inside testing/synctest).
//
// # Performance
//
// go test -run '^$' -bench . -benchmem -count 3 ./ratelimit/ on a loaded
// 2-core VM (kvm-clock; time.Now alone costs about 80 ns there). Ratios
// within one run matter more than the absolute numbers:
//
//	BenchmarkBucketAllow            see below
//	BenchmarkXRateAllow             (x/time/rate, same rate and burst)
//	BenchmarkBucketWait
//	BenchmarkXRateWait
//	BenchmarkKeyedWait/keys=100000
package ratelimit
