package storetest

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testExclusive: a leased key is not leased again, whatever comes behind
// it, until its lease ends; the next lease has a larger fence.
func testExclusive(f *fixture) {
	f.add("k", "1")
	l := f.claimOne(one())
	next := f.none()
	require.LessOrEqual(f.t, next, ttl, "the lease lapses within its TTL")
	f.add("k", "2")
	ls, _ := f.claim(store.ClaimParams{Keys: 10, TTL: ttl})
	require.Empty(f.t, ls, "a leased key was leased again")
	f.ack(l, true)
	l2 := f.claimOne(one())
	f.values(l2, "k", "2")
	require.Greater(f.t, l2.Fence, l.Fence)
	f.ack(l2, false)
}

// testExclusiveConcurrent: workers claiming and ending leases at once,
// while values keep coming, never hold one key twice; every value is
// handled once, in order; a retried batch comes back whole.
func testExclusiveConcurrent(f *fixture) {
	const keys, per, workers = 6, 20, 6
	var (
		mu      sync.Mutex
		holding = map[string]bool{}
		fences  = map[string]uint64{}
		retried = map[string]givenBack{} // a key's batch given back, by Retry or Defer
		handled = map[string][]string{}
		done    int
		bad     []string
	)
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range per {
			for k := range keys {
				if err := f.s.Add(f.ctx, f.q, fmt.Sprint(k), [][]byte{[]byte(fmt.Sprint(i))}, store.AddParams{}); err != nil {
					mu.Lock()
					fail("Add: %v", err)
					mu.Unlock()
					return
				}
			}
		}
	})
	end := time.Now().Add(5 * time.Second)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for time.Now().Before(end) {
				p := store.ClaimParams{Keys: 1 + rng.IntN(3), MaxBatch: rng.IntN(4), TTL: ttl}
				ls, next, err := f.s.Claim(f.ctx, f.q, p)
				mu.Lock()
				if err != nil || len(bad) > 0 || done == keys*per {
					if err != nil {
						fail("Claim: %v", err)
					}
					mu.Unlock()
					return
				}
				outcomes := make([]store.OutcomeKind, len(ls))
				for i, l := range ls {
					if holding[l.Key] {
						fail("key %q leased twice at once", l.Key)
					}
					if l.Fence <= fences[l.Key] {
						fail("key %q: fence %d after %d", l.Key, l.Fence, fences[l.Key])
					}
					want := givenBack{vals: l.Values, attempt: 1}
					if r, ok := retried[l.Key]; ok {
						want = r
						delete(retried, l.Key)
					}
					if !sameBytes(want.vals, l.Values) || l.Attempt != want.attempt {
						fail("key %q: leased %q at attempt %d, want %q at attempt %d",
							l.Key, strs(l.Values), l.Attempt, strs(want.vals), want.attempt)
					}
					holding[l.Key], fences[l.Key] = true, l.Fence
					outcomes[i] = []store.OutcomeKind{store.Ack, store.Ack, store.Ack, store.Retry, store.Defer}[rng.IntN(5)]
					if outcomes[i] == store.Ack {
						handled[l.Key] = append(handled[l.Key], strs(l.Values)...)
						done += len(l.Values)
					} else {
						r := givenBack{vals: l.Values, attempt: l.Attempt}
						if outcomes[i] == store.Retry {
							r.attempt++
						}
						retried[l.Key] = r
					}
				}
				for _, l := range ls {
					holding[l.Key] = false // before Finish, after which another may lease it
				}
				mu.Unlock()
				for i, l := range ls {
					if _, err := f.s.Finish(f.ctx, l, store.Outcome{Kind: outcomes[i]}); err != nil {
						mu.Lock()
						fail("Finish(%s) of key %q: %v", kindName(outcomes[i]), l.Key, err)
						mu.Unlock()
					}
				}
				if len(ls) == 0 {
					if err := f.s.Wait(f.ctx, f.q, min(next, 20*time.Millisecond)); err != nil {
						mu.Lock()
						fail("Wait: %v", err)
						mu.Unlock()
						return
					}
				}
			}
		})
	}
	wg.Wait()
	require.Empty(f.t, bad)
	require.Equal(f.t, keys*per, done, "not every value was handled in time")
	want := make([]string, per)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	for k := range keys {
		require.Equal(f.t, want, handled[fmt.Sprint(k)], "values of key %d", k)
	}
	require.Zero(f.t, f.stats().Values)
}

// givenBack is a batch given back by Retry or Defer, as its next lease
// must hold it.
type givenBack struct {
	vals    [][]byte
	attempt int
}

// testStaleHoldersRefused: workers that stall past their lease's TTL are
// refused when they come back, while others take over their batches; the
// batches that were acked cover every value once, in order.
func testStaleHoldersRefused(f *fixture) {
	const keys, per, workers = 4, 6, 4
	short := 4 * f.tick
	for k := range keys {
		for i := range per {
			f.add(fmt.Sprint(k), fmt.Sprint(i))
		}
	}
	type acked struct {
		fence uint64
		vals  []string
	}
	var (
		mu      sync.Mutex
		handled = map[string][]acked{}
		done    int
		bad     []string
	)
	var wg sync.WaitGroup
	end := time.Now().Add(5 * time.Second)
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			for time.Now().Before(end) {
				before := time.Now()
				ls, next, err := f.s.Claim(f.ctx, f.q, store.ClaimParams{Keys: 1, MaxBatch: 2, TTL: short})
				mu.Lock()
				if err != nil || len(bad) > 0 || done == keys*per {
					if err != nil {
						bad = append(bad, fmt.Sprintf("Claim: %v", err))
					}
					mu.Unlock()
					return
				}
				mu.Unlock()
				if len(ls) == 0 {
					if err := f.s.Wait(f.ctx, f.q, min(next, short)); err != nil {
						return
					}
					continue
				}
				l := ls[0]
				stall := rng.IntN(4) == 0
				if stall {
					time.Sleep(short + f.tick) // the lease lapses meanwhile
				}
				_, err = f.s.Finish(f.ctx, l, store.Outcome{Kind: store.Ack})
				after := time.Now()
				mu.Lock()
				switch {
				case err == nil && stall:
					bad = append(bad, fmt.Sprintf("key %q: Finish of a lease %v past its TTL succeeded", l.Key, after.Sub(before)-short))
				case err == nil:
					handled[l.Key] = append(handled[l.Key], acked{l.Fence, strs(l.Values)})
					done += len(l.Values)
				case !errors.Is(err, store.ErrLeaseLost):
					bad = append(bad, fmt.Sprintf("Finish: %v", err))
				case after.Sub(before) < short:
					bad = append(bad, fmt.Sprintf("key %q: lease lost %v before its TTL", l.Key, short-after.Sub(before)))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Empty(f.t, bad)
	require.Equal(f.t, keys*per, done, "not every value was handled in time")
	for k := range keys {
		batches := handled[fmt.Sprint(k)]
		slices.SortFunc(batches, func(a, b acked) int { return cmp.Compare(a.fence, b.fence) })
		var got, want []string
		for i, b := range batches {
			require.True(f.t, i == 0 || b.fence > batches[i-1].fence, "two acked leases of key %d share a fence", k)
			got = append(got, b.vals...)
		}
		for i := range per {
			want = append(want, fmt.Sprint(i))
		}
		require.Equal(f.t, want, got, "values of key %d, by fence", k)
	}
}

// testLeaseLapses: a lease not extended within its TTL lapses; the key is
// leased again with the same values, the next Attempt and a larger fence,
// and the old holder can neither finish nor extend it, nor change anything
// by trying.
func testLeaseLapses(f *fixture) {
	short := 4 * f.tick
	f.add("k", "1", "2")
	before := time.Now()
	l1 := f.claimOne(store.ClaimParams{Keys: 1, TTL: short})
	ls, next := f.claim(one())
	if since := time.Since(before); since >= short {
		f.slow(since, short, "l1 may have lapsed before the Claim that must find it leased")
	}
	require.Empty(f.t, ls, "Claim leased a key whose lease holds")
	require.Positive(f.t, next, "Claim found nothing ready, so next must be positive")
	require.LessOrEqual(f.t, next, short)
	l2 := f.await(one(), before.Add(short))
	f.values(l2, "k", "1", "2")
	require.Equal(f.t, l1.Attempt+1, l2.Attempt)
	require.Greater(f.t, l2.Fence, l1.Fence)
	require.True(f.t, l1.First.Equal(l2.First), "First of the same batch")

	for _, k := range []store.OutcomeKind{store.Ack, store.Drop, store.Retry, store.Defer, store.Hold} {
		f.lost(l1, store.Outcome{Kind: k, Err: "stale"})
	}
	st := f.stats()
	require.Equal(f.t, store.Stats{Values: 2, Keys: 1, Leased: 1}, st, "a stale holder changed something")
	f.none()
	require.NoError(f.t, f.s.Extend(f.ctx, l2, ttl))
	f.ack(l2, false)
	f.lost(l2, store.Outcome{Kind: store.Ack}) // ended already

	f.add("k", "3")
	l3 := f.claimOne(one())
	require.Greater(f.t, l3.Fence, l2.Fence, "fences grow even after the key emptied")
	forged := l3
	forged.Fence++
	f.lost(forged, store.Outcome{Kind: store.Ack})
	f.ack(l3, false)
}

// testLapsedLeaseRefused: a lease whose TTL passed is refused even before
// another holder leased the key, and counts as ready.
func testLapsedLeaseRefused(f *fixture) {
	short := 2 * f.tick
	f.add("k", "1")
	l := f.claimOne(store.ClaimParams{Keys: 1, TTL: short})
	f.pause(short + f.tick/2) // measured from after Claim returned
	f.lost(l, store.Outcome{Kind: store.Ack})
	require.Equal(f.t, 1, f.stats().Ready)
	l2 := f.claimOne(one())
	f.values(l2, "k", "1")
	require.Equal(f.t, 2, l2.Attempt)
	f.ack(l2, false)
}

// testExtendKeepsLease: a lease extended in time outlives its first TTL
// many times over.
func testExtendKeepsLease(f *fixture) {
	short := 6 * f.tick
	f.add("k", "1")
	start := time.Now()
	l := f.claimOne(store.ClaimParams{Keys: 1, TTL: short})
	alive := start // the lease is alive until at least alive+short
	for time.Since(start) < 4*short {
		f.pause(f.tick)
		before := time.Now()
		if err := f.s.Extend(f.ctx, l, short); err != nil {
			require.ErrorIs(f.t, err, store.ErrLeaseLost)
			require.False(f.t, time.Now().Before(alive.Add(short)), "Extend refused a live lease")
			f.slow(time.Since(alive), short, "a pause overran the TTL")
		}
		alive = before
		if ls, _ := f.claim(one()); len(ls) > 0 {
			require.False(f.t, time.Now().Before(alive.Add(short)), "an extended lease was leased again")
			f.slow(time.Since(alive), short, "a Claim came after the TTL of the Extend before it")
		}
	}
	f.ack(l, false)
}

// testStopAndDrain: a process that stops gives its leases back with Defer
// after 0; another worker leases them at once, with the same attempts.
func testStopAndDrain(f *fixture) {
	f.add("b", "b1")
	l := f.claimOne(one())
	f.finish(l, store.Outcome{Kind: store.Retry})
	f.add("a", "a1")
	f.add("c", "c1")
	ls, _ := f.claim(store.ClaimParams{Keys: 3, TTL: ttl})
	require.Len(f.t, ls, 3)
	f.values(ls[0], "b", "b1")
	require.Equal(f.t, 2, ls[0].Attempt)
	f.values(ls[1], "a", "a1")
	f.values(ls[2], "c", "c1")

	for _, l := range ls { // the process stops
		require.True(f.t, f.finish(l, store.Outcome{Kind: store.Defer}))
	}
	st := f.stats()
	require.Equal(f.t, 3, st.Ready)
	require.Zero(f.t, st.Retrying)
	again, _ := f.claim(store.ClaimParams{Keys: 3, TTL: ttl})
	require.Len(f.t, again, 3, "deferred leases are ready at once")
	for i, l := range again {
		require.Equal(f.t, ls[i].Key, l.Key, "given back in the order they were deferred")
		require.Equal(f.t, ls[i].Values, l.Values)
		require.Equal(f.t, ls[i].Attempt, l.Attempt, "Defer counts no attempt")
		require.Greater(f.t, l.Fence, ls[i].Fence)
		f.ack(l, false)
	}
}
