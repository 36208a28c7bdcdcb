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
//	hand a 429/503 the Transport returned to a pacer Runner   CheckResponse, LimitError
//	read a Retry-After header safely                          RetryAfter, ParseRetryAfter
//	one limit, or one per account, shared by every instance   redisrate.New, redisrate.NewKeyed
//
// Limiter (Wait) is what the rest of pacer consumes; Pauser (PauseFor) is
// how a Retry-After reaches a limiter. Bucket and Keyed.For implement both.
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
//   - RetryAfter never yields a negative wait or one above its cap.
//   - Concurrency: every type is safe for concurrent use. None owns a
//     goroutine, so none needs Close; time comes from the Clock in each
//     config (default clock.New(), which works inside testing/synctest).
//
// # Performance
//
// Measured with go test -run '^$' -bench . -benchmem -count 3 ./ratelimit/
// (Go 1.26, linux/amd64, a 2-core VM with kvm-clock, where reading the
// clock alone costs about 50 ns) at a load average of about 3. Every
// benchmark allocates nothing (0 B/op, 0 allocs/op).
//
//	benchmark                              ns/op (3 runs)
//	BenchmarkBucketAllow                   92.3, 92.6, 92.3
//	BenchmarkXRateAllow                    90.0, 90.7, 89.7
//	BenchmarkBucketWait                    97.3, 96.7, 99.6
//	BenchmarkXRateWait                     109.3, 114.1, 126.3
//	BenchmarkKeyedWait/keys=100            94.6, 97.9, 88.8
//	BenchmarkKeyedWait/keys=100000         154.1, 131.9, 126.8
//	BenchmarkKeyedWait/keys=100000,random  178.0, 181.3, 181.7
//
// The Bucket benchmarks use a huge rate and burst, so no call sleeps; they
// measure the bookkeeping on top of x/time/rate's. The XRate ones are
// golang.org/x/time/rate's Limiter with the same rate and burst. The Keyed
// benchmarks cycle through keys that all have a bucket already (steady
// state), in order or in a random order.
//
// On a busy machine absolute figures swing by 2x from run to run (at a load
// average of 15 the same benchmarks took 300-500 ns, and 500-1300 ns for
// 100000 keys), so the paired benchmarks alternate two sides in chunks of
// 1000 calls and report the median ratio over rounds, which stays put:
//
//	BenchmarkBucketVsXRate/Allow           Bucket / x/time/rate = 1.04
//	BenchmarkBucketVsXRate/Wait            Bucket / x/time/rate = 0.88
//	BenchmarkKeyedVsFloor/keys=100000      Keyed / floor        = 1.17
//
// The floor is what any keyed limiter pays before doing token math: read
// the clock, lock a mutex, find the key in a map of 100000 pointers.
package ratelimit
