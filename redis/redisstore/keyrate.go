package redisstore

import "github.com/pacerkit/pacer/store"

var _ store.KeyRateClaimer = (*Store)(nil)

// ClaimsKeyRate implements store.KeyRateClaimer: a Store honours
// ClaimParams.KeyRate. A key's T lives in its hash while it has one,
// where the lease that moves it writes it with the key's other fields,
// and the Claim reads it with the fields it reads anyway; a call that
// deletes the hash before T passed keeps T in the queue's ZSET rates, in
// the same hash slot (see lua/lib.lua), until 10 s after it passed (and
// the set a day and 10 s after the last call that wrote it). A Claim
// with a KeyRate thus costs no command more for keys whose hash has T,
// one ZMSCORE for all the others it pops, and a few for each key it
// defers; one without costs nothing more. A call that empties keys before
// their T passed costs two commands more (ZADD and PEXPIRE of rates), a
// third (ZREMRANGEBYSCORE) when rates did not hold one of them.
func (s *Store) ClaimsKeyRate() bool { return true }

// keyRate is r as the scripts take it: the zero KeyRate when r is off,
// else Burst at least 1. Two KeyRates that limit the same have the same
// keyRate.
func keyRate(r store.KeyRate) store.KeyRate {
	if !r.On() {
		return store.KeyRate{}
	}
	return store.KeyRate{Interval: r.Interval, Burst: max(r.Burst, 1)}
}

// keyRateArgs appends to args the Interval, in microseconds, and Burst of
// r, which is on.
func keyRateArgs(args []any, r store.KeyRate) []any {
	r = keyRate(r)
	return append(args, micros(r.Interval), r.Burst)
}
