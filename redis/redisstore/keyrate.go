package redisstore

import "github.com/pacerkit/pacer/store"

var _ store.KeyRateClaimer = (*Store)(nil)

// ClaimsKeyRate implements store.KeyRateClaimer: a Store honours
// ClaimParams.KeyRate. Each key's T lives in the queue's ZSET rates (see
// lua/lib.lua), beside the key's state and in its hash slot, and outlives
// the key; its entries whose T passed 10 s ago or more go with the next
// Claim that leases a key without one, so it holds at most the keys
// leased within Burst*Interval + 10 s before such a Claim. A Claim with a KeyRate costs two
// commands more in its script (a ZMSCORE of the keys it popped and a ZADD
// of T of those it leased), a third (ZREMRANGEBYSCORE) when one of those
// had no entry, and a few a key it defers; one without costs nothing
// more.
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
