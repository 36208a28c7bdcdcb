package store_test

import (
	"context"
	"fmt"
	"time"

	"github.com/pacerkit/pacer/store"
)

// A worker's loop on any engine: claim what is ready, finish each lease,
// and when nothing is ready, wait for as long as Claim says, or for a
// change.
func Example_worker() {
	ctx := context.Background()
	var s store.Store = store.NewMemory(store.MemoryConfig{})
	add := func(key, v string, p store.AddParams) {
		if err := s.Add(ctx, "mail", key, [][]byte{[]byte(v)}, p); err != nil {
			panic(err)
		}
	}
	add("alice", "hello", store.AddParams{})
	add("alice", "again", store.AddParams{})
	add("bob", "hi", store.AddParams{Wait: 20 * time.Millisecond}) // debounced

	for handled := 0; handled < 3; {
		leases, next, err := s.Claim(ctx, "mail", store.ClaimParams{Keys: 8, TTL: time.Minute})
		if err != nil {
			panic(err)
		}
		for _, l := range leases {
			fmt.Printf("%s %q attempt %d\n", l.Key, l.Values, l.Attempt)
			handled += len(l.Values)
			if _, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack}); err != nil {
				panic(err)
			}
		}
		if len(leases) == 0 {
			if err := s.Wait(ctx, "mail", next); err != nil {
				panic(err)
			}
		}
	}
	// Output:
	// alice ["hello" "again"] attempt 1
	// bob ["hi"] attempt 1
}
