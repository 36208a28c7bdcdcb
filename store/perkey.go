package store

// PerKeyClaimer is implemented by engines that honour ClaimParams.PerKey:
// a key may then have up to PerKey leases out at once, each of its own
// batch, with its own Fence, so that the batches of one busy key run side
// by side. Every other guarantee of the package doc holds per batch:
//
//   - Order: batches are leased in Add order. A key's next lease takes the
//     first of its values that are not out on a lease: a batch that came
//     back (a lapse, a Retry, a Defer) is leased again, as it was, before
//     any value behind it that was never leased; else the values behind
//     the last batch, up to MaxBatch and up to the first that is not due
//     (AddParams.Delay). A batch that came back and is not
//     ready yet (a Retry's delay) keeps the key from new leases until it
//     is, so no value overtakes it.
//   - Exclusivity: at most PerKey leases of a key at once, PerKey as the
//     Claim that leased the key last said: a key stops taking leases
//     while that many are out. Every value is on at most one lease.
//   - Fencing: every lease of the key carries a Fence larger than any
//     before it, of any batch of the key.
//   - Fairness: a key with fewer leases than PerKey and a batch ready is
//     ready, at the later of when it could take another lease (a lease
//     ended, lapsed, or was taken: a key that just got a lease goes behind
//     the keys already waiting) and when that batch became ready. One
//     Claim may lease several batches of one key.
//   - Finish ends its own lease only: Ack and Drop remove exactly its
//     batch's values (Drop keeps them as one dead letter), whichever
//     batches of the key are out or back; Retry and Defer keep its batch in
//     its place, to be leased again before the values behind it that were
//     never leased. Hold holds the key: no new lease until Release, while
//     the leases already out go on and end as they would (a batch that
//     comes back waits for Release too). Release starts the attempts of
//     the kept batches over and makes them ready at once; those behind the
//     key's last lease out give up their size, as the held batch of a key
//     with one lease does.
//   - A lease that lapses frees its slot, and its batch comes back as a
//     Retry's would, ready from the lapse: its next lease has the next
//     Attempt and a larger Fence.
//   - Bound, Stats and Inspector stay exact: every value counts once
//     towards AddParams.MaxValues until its batch is acked or dropped;
//     Stats.Leased counts the keys with a lease out (a held key counts
//     as Held), and KeyInfo.Leases a key's leases.
//
// A key leased with PerKey 0 or 1 behaves exactly as the package doc says.
type PerKeyClaimer interface {
	// ClaimsPerKey reports whether the engine honours ClaimParams.PerKey.
	// A wrapper of another engine reports what the engine it wraps does.
	ClaimsPerKey() bool
}

var _ PerKeyClaimer = (*Memory)(nil)

// ClaimsPerKey implements PerKeyClaimer: Memory honours ClaimParams.PerKey.
func (m *Memory) ClaimsPerKey() bool { return true }
