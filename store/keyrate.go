package store

import (
	"fmt"
	"time"
)

// KeyRate is a rate limit per key that the engine keeps beside the key's
// state, on an engine that implements KeyRateClaimer: a Claim leases a
// key only when the key's bucket has a token, and takes it in the same
// step, so the limit costs no call of its own and holds across every
// process that shares the queue. The zero KeyRate limits nothing.
//
// The bucket is GCRA on the engine's clock: each key has a theoretical
// arrival time T, none at first. A Claim at now may lease the key if
//
//	T <= now + (Burst-1)*Interval
//
// and then sets T to max(T, now) + Interval. So a key takes at most Burst
// leases at once after a quiet time, and one every Interval after that.
type KeyRate struct {
	// Interval is the time between two leases of a key once its burst is
	// spent. 0 turns the limit off.
	Interval time.Duration
	// Burst is the most leases of a key in a row, with no wait between
	// them, after the key was quiet for Burst*Interval. 0 means 1.
	Burst int
}

// MaxKeyRateSpan bounds Burst*Interval, the time a full bucket spans: a
// day, so that engines that keep T in whole microseconds never overflow.
const MaxKeyRateSpan = 24 * time.Hour

// On reports whether r limits anything.
func (r KeyRate) On() bool { return r.Interval > 0 }

// Tolerance is how far T may be ahead of now for a Claim to lease the
// key: (Burst-1)*Interval.
func (r KeyRate) Tolerance() time.Duration {
	return time.Duration(max(r.Burst, 1)-1) * r.Interval
}

// Validate returns an error naming the field of r that no engine takes.
func (r KeyRate) Validate() error {
	switch {
	case r.Interval < 0:
		return fmt.Errorf("store: KeyRate.Interval must be >= 0, got %v", r.Interval)
	case r.Burst < 0:
		return fmt.Errorf("store: KeyRate.Burst must be >= 0, got %d", r.Burst)
	case r.Interval > 0 && r.Interval < time.Microsecond:
		return fmt.Errorf("store: KeyRate.Interval must be at least 1µs, got %v", r.Interval)
	case r.Interval > 0 && time.Duration(max(r.Burst, 1)) > MaxKeyRateSpan/r.Interval:
		return fmt.Errorf("store: KeyRate.Burst*Interval must be at most %v, got %d*%v", MaxKeyRateSpan, r.Burst, r.Interval)
	}
	return nil
}

// KeyRateClaimer is implemented by engines that honour ClaimParams.KeyRate.
// With a KeyRate that is On:
//
//   - Every lease of a key takes one token of the key's bucket, whatever
//     it becomes: a batch retried, deferred, or leased again after a
//     lapse takes another token for its next lease. With PerKey, each of
//     a key's leases takes one.
//   - A Claim that finds a ready key without a token does not lease it:
//     it defers the key as a Finish with Defer would (no attempt counts;
//     Inspector shows it Deferred until then) until its token is due,
//     T - (Burst-1)*Interval, when the key is ready again, behind the keys
//     ready before then. The Claim goes on with the next ready key in its
//     place, so a key without a token never holds a caller that has
//     other work. A Claim may return fewer leases than Keys, with a wait
//     of 0, when it deferred many keys; the caller then claims again.
//   - With tenants (FairTenants), a key deferred for its token uses no
//     turn of its tenant.
//   - A key's bucket outlives its values: a key that emptied and gets
//     values again before T passed finds its T. Engines may forget T
//     once it passed, which leaves the bucket full, as it would be.
//   - The rate is the queue's: every Claim of a queue should pass the
//     same KeyRate. A Claim reads T as the Claims before left it, and
//     applies its own KeyRate to it.
//   - A Claim whose KeyRate is off neither reads nor changes T.
//
// The rate holds between leases. A caller that waits between a lease and
// its work (a Runner's Limiter, say) may start the work of two leases
// closer together than Interval, by at most that wait.
type KeyRateClaimer interface {
	// ClaimsKeyRate reports whether the engine honours ClaimParams.KeyRate.
	// A wrapper of another engine reports what the engine it wraps does.
	ClaimsKeyRate() bool
}
