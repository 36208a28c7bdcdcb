package storetest

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testAddRacesClaim: values added by several goroutines to the same few
// keys, while workers lease every ready value of a key (MaxBatch 0) and ack
// it, are all leased once, each adder's in the order it added them. A
// shared engine whose Claim sees a key's latest tail but reads the values
// of an older instant would lease, and so ack, values it never read. Where
// the engine implements store.FinishClaimer, half the workers end each
// lease with FinishAndClaim.
func testAddRacesClaim(f *fixture) {
	const keys, adders, workers, per = 3, 3, 4, 200
	fc, _ := f.s.(store.FinishClaimer)
	p := store.ClaimParams{Keys: 2, TTL: ttl}
	var (
		mu      sync.Mutex
		added   int
		holding = map[string]bool{}
		handled = map[string][]string{} // values per key, as leased
		bad     []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		bad = append(bad, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	// take records the leases ls as handled, and reports whether the
	// workers should go on.
	take := func(ls []store.Lease) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range ls {
			if holding[l.Key] {
				bad = append(bad, fmt.Sprintf("key %q leased twice at once", l.Key))
			}
			if l.Attempt != 1 {
				bad = append(bad, fmt.Sprintf("key %q leased at attempt %d, want 1", l.Key, l.Attempt))
			}
			holding[l.Key] = true
			handled[l.Key] = append(handled[l.Key], strs(l.Values)...)
		}
		return len(bad) == 0
	}
	// release notes that the lease of key ends, before Finish, after which
	// another worker may lease it.
	release := func(key string) {
		mu.Lock()
		holding[key] = false
		mu.Unlock()
	}
	// done reports whether every value the adders will add was leased.
	done := func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, vs := range handled {
			n += len(vs)
		}
		return n >= adders*per || len(bad) > 0
	}

	var adding, wg sync.WaitGroup
	var addersDone atomic.Bool
	for a := range adders {
		adding.Go(func() {
			for i := range per {
				key := strconv.Itoa((a + i) % keys)
				if err := f.s.Add(f.ctx, f.q, key, [][]byte{fmt.Appendf(nil, "%d/%d", a, i)}, store.AddParams{}); err != nil {
					fail("Add: %v", err)
					return
				}
				mu.Lock()
				added++
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		adding.Wait()
		addersDone.Store(true)
	})
	const budget = 30 * time.Second
	end := time.Now().Add(budget)
	for w := range workers {
		chain := fc != nil && w%2 == 1
		wg.Go(func() {
			var ls []store.Lease
			for !done() {
				if time.Now().After(end) {
					fail("not every value was leased in %v", budget)
					return
				}
				var next time.Duration
				finished := addersDone.Load() // before the Claim that may find the store empty
				if len(ls) == 0 {
					var err error
					if ls, next, err = f.s.Claim(f.ctx, f.q, p); err != nil {
						fail("Claim: %v", err)
						return
					}
				}
				if len(ls) == 0 {
					if next == store.Never && finished {
						return // the store is empty: lost values are lost for good
					}
					if err := f.s.Wait(f.ctx, f.q, min(next, f.tick)); err != nil {
						fail("Wait: %v", err)
						return
					}
					continue
				}
				if !take(ls) {
					return
				}
				// Every lease but the last ends with Finish; the last with
				// FinishAndClaim on a chaining worker, whose claim is the
				// next round's leases.
				last := len(ls) - 1
				for _, l := range ls[:last] {
					release(l.Key)
					if _, err := f.s.Finish(f.ctx, l, store.Outcome{Kind: store.Ack}); err != nil {
						fail("Finish of key %q: %v", l.Key, err)
						return
					}
				}
				l := ls[last]
				release(l.Key)
				var err error
				if chain {
					_, ls, _, err = fc.FinishAndClaim(f.ctx, l, store.Outcome{Kind: store.Ack}, p)
				} else {
					ls = nil
					_, err = f.s.Finish(f.ctx, l, store.Outcome{Kind: store.Ack})
				}
				if err != nil {
					fail("Finish of key %q: %v", l.Key, err)
					return
				}
			}
		})
	}
	wg.Wait()
	require.Empty(f.t, bad)
	require.Equal(f.t, adders*per, added)

	// Each adder's values of a key, in the order they were leased, must be
	// the ones it added, in the order it added them.
	for k := range keys {
		key := strconv.Itoa(k)
		got := map[string][]int{}
		for _, v := range handled[key] {
			a, i, ok := strings.Cut(v, "/")
			require.True(f.t, ok, "key %q: value %q was never added", key, v)
			n, err := strconv.Atoi(i)
			require.NoError(f.t, err, "key %q: value %q was never added", key, v)
			got[a] = append(got[a], n)
		}
		for a := range adders {
			var want []int
			for i := range per {
				if (a+i)%keys == k {
					want = append(want, i)
				}
			}
			require.Equal(f.t, want, got[strconv.Itoa(a)], "key %q: values of adder %d, as leased", key, a)
		}
	}
	require.Zero(f.t, f.stats().Values)
}
