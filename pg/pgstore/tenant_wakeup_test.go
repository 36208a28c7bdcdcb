package pgstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/pacerkit/pacer/store"
)

// A Claim that takes a tenant out of the turns while an Add gives it a
// ready key leaves no key behind: in rounds on queues of their own, a
// tenant whose only key was just acked (in the turns, with no key ready)
// meets at once a Claim, which finds no tenant with a key ready and takes
// it out of the turns, and an Add of its key. Whichever comes first, the
// key is then ready, so a Claim leases it.
func TestTenantAddMeetsClaimThatEndsItsTurns(t *testing.T) {
	s := newStore(t, connect(t, appName(t)))
	ctx := context.Background()
	const queues, rounds = 6, 150
	claim := store.ClaimParams{Keys: 1, TTL: ttl}
	add := func(q string) error {
		return s.Add(ctx, q, "k", [][]byte{{1}}, store.AddParams{Tenant: "t"})
	}
	// take claims and acks the key of q, failing if no Claim leases it.
	take := func(q string, r int, ls []store.Lease) bool {
		if len(ls) == 0 {
			var err error
			if ls, _, err = s.Claim(ctx, q, claim); err != nil {
				t.Error(err)
				return false
			}
		}
		if len(ls) != 1 {
			t.Errorf("queue %s, round %d: the tenant's ready key is not claimable (%d leases)", q, r, len(ls))
			return false
		}
		if _, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack}); err != nil {
			t.Error(err)
			return false
		}
		return true
	}
	var wg sync.WaitGroup
	for i := range queues {
		wg.Go(func() {
			q := fmt.Sprint("wake", i)
			if err := add(q); err != nil {
				t.Error(err)
				return
			}
			if !take(q, -1, nil) {
				return
			}
			for r := range rounds {
				var (
					race       sync.WaitGroup
					ls         []store.Lease
					cerr, aerr error
				)
				race.Go(func() { ls, _, cerr = s.Claim(ctx, q, claim) })
				race.Go(func() { aerr = add(q) })
				race.Wait()
				if cerr != nil || aerr != nil {
					t.Error(cerr, aerr)
					return
				}
				if !take(q, r, ls) {
					return
				}
			}
		})
	}
	wg.Wait()
}
