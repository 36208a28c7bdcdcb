package storetest

import (
	"errors"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// The PerKey scenarios hold an engine that implements store.PerKeyClaimer
// to its guarantees (see there), and are skipped for the others.

// perKey returns ClaimParams that lease up to keys batches of one value,
// n of a key at once, for ttl; it skips the scenario when the engine does
// not honour ClaimParams.PerKey.
func (f *fixture) perKey(n, keys int) store.ClaimParams {
	f.t.Helper()
	if pk, ok := f.s.(store.PerKeyClaimer); !ok || !pk.ClaimsPerKey() {
		f.t.Skip("the engine does not implement store.PerKeyClaimer")
	}
	return store.ClaimParams{Keys: keys, MaxBatch: 1, TTL: ttl, PerKey: n}
}

// testPerKeyLimit: a key has at most PerKey leases at once, of its first
// batches in Add order, each with a fence larger than the one before; the
// key is Leased once in Stats, and its KeyInfo counts its leases and shows
// the lease of its first values.
func testPerKeyLimit(f *fixture) {
	p := f.perKey(2, 5)
	f.add("k", "1", "2", "3", "4")
	ls, _ := f.claim(p)
	require.Len(f.t, ls, 2, "a key with PerKey 2 leased at once")
	f.values(ls[0], "k", "1")
	f.values(ls[1], "k", "2")
	require.Greater(f.t, ls[1].Fence, ls[0].Fence)
	f.none()
	st := f.stats()
	require.Equal(f.t, 4, st.Values)
	require.Equal(f.t, 1, st.Keys)
	require.Equal(f.t, 1, st.Leased)
	require.Zero(f.t, st.Ready)
	if _, ok := f.s.(store.Inspector); ok {
		info := f.keyInfo(f.inspector(), "k")
		require.Equal(f.t, store.Leased, info.State)
		require.Equal(f.t, 2, info.Leases)
		require.Equal(f.t, ls[0].Fence, info.Fence, "KeyInfo shows the lease of the key's first values")
		require.Equal(f.t, 1, info.Attempt)
	}
	// PerKey 1 takes no lease beside the two out.
	ls2, _ := f.claim(store.ClaimParams{Keys: 5, MaxBatch: 1, TTL: ttl, PerKey: 1})
	require.Empty(f.t, ls2)
	f.ack(ls[1], true)
	p.Keys = 1
	l3 := f.claimOne(p)
	f.values(l3, "k", "3")
	require.Greater(f.t, l3.Fence, ls[1].Fence)
	f.none()
	f.ack(ls[0], true)
	f.ack(l3, true)
	l4 := f.claimOne(p)
	f.values(l4, "k", "4")
	f.ack(l4, false)
	require.Zero(f.t, f.stats().Values)
}

// testPerKeyIndependentFinish: each lease ends by itself: an Ack of a
// later batch removes its values only, the key's first batch stays out
// and is then acked; a Drop keeps exactly its batch as a dead letter; the
// values count for MaxValues until their own batch ends.
func testPerKeyIndependentFinish(f *fixture) {
	p := f.perKey(3, 3)
	f.add("k", "1", "2", "3", "4")
	ls, _ := f.claim(p)
	require.Len(f.t, ls, 3)
	f.ack(ls[1], true)
	require.Equal(f.t, 3, f.stats().Values)
	require.ErrorIs(f.t, f.s.Add(f.ctx, f.q, "k", bytesOf([]string{"5"}), store.AddParams{MaxValues: 3}), store.ErrFull)
	require.True(f.t, f.finish(ls[2], store.Outcome{Kind: store.Drop, Err: "bad"}))
	require.Equal(f.t, 2, f.stats().Values)
	f.addP("k", store.AddParams{MaxValues: 3}, "5")
	require.Equal(f.t, 3, f.stats().Values)
	if dl, ok := f.s.(store.DeadLetters); ok {
		ds := f.list(dl, f.q, 0, 10)
		require.Len(f.t, ds, 1)
		require.Equal(f.t, []string{"3"}, strs(ds[0].Values))
		require.Equal(f.t, "bad", ds[0].Err)
	}
	p.Keys = 1
	l4 := f.claimOne(p)
	f.values(l4, "k", "4")
	l5 := f.claimOne(p)
	f.values(l5, "k", "5")
	f.none()
	f.lost(ls[1], store.Outcome{Kind: store.Ack})
	f.ack(ls[0], true)
	f.ack(l5, true)
	f.ack(l4, false)
}

// testPerKeyRetry: a retried batch is leased again, as it was, before any
// value behind it that was never leased, at its next Attempt and with a
// larger fence; while its delay runs, the key takes no new lease though a
// slot is free.
func testPerKeyRetry(f *fixture) {
	p := f.perKey(2, 2)
	f.add("k", "1", "2", "3")
	ls, _ := f.claim(p)
	require.Len(f.t, ls, 2)
	require.True(f.t, f.finish(ls[0], store.Outcome{Kind: store.Retry}))
	p.Keys = 1
	l1 := f.claimOne(p)
	f.values(l1, "k", "1")
	require.Equal(f.t, 2, l1.Attempt)
	require.Greater(f.t, l1.Fence, ls[1].Fence)

	delay := 3 * f.tick
	before := time.Now()
	require.True(f.t, f.finish(l1, store.Outcome{Kind: store.Retry, After: delay}))
	f.noneBefore(before, delay) // "3" waits behind the retried "1"
	l1 = f.await(p, before.Add(delay))
	f.values(l1, "k", "1")
	require.Equal(f.t, 3, l1.Attempt)
	f.ack(ls[1], true)
	l3 := f.claimOne(p)
	f.values(l3, "k", "3")
	require.Equal(f.t, 1, l3.Attempt)
	f.ack(l1, true)
	f.ack(l3, false)
}

// testPerKeyLapse: a lease that lapses frees its slot, and its batch is
// leased again, before the values behind it, at the next Attempt with a
// larger fence, while the key's other lease goes on.
func testPerKeyLapse(f *fixture) {
	p := f.perKey(2, 1)
	short := p
	short.TTL = 3 * f.tick
	f.add("k", "1", "2", "3")
	before := time.Now()
	l1 := f.claimOne(short)
	l2 := f.claimOne(p)
	if since := time.Since(before); since >= short.TTL {
		f.slow(since, short.TTL, "l1 may have lapsed before the Claim that must lease the next batch")
	}
	f.values(l2, "k", "2")
	again := f.await(p, before.Add(short.TTL))
	f.values(again, "k", "1")
	require.Equal(f.t, 2, again.Attempt)
	require.Greater(f.t, again.Fence, l2.Fence)
	f.lost(l1, store.Outcome{Kind: store.Ack})
	require.NoError(f.t, f.s.Extend(f.ctx, l2, ttl), "the key's other lease goes on")
	f.none()
	f.ack(again, true)
	f.ack(l2, true)
	l3 := f.claimOne(p)
	f.values(l3, "k", "3")
	f.ack(l3, false)
}

// testPerKeyHold: a Hold holds the key: no new lease until Release, while
// its other lease goes on and ends; Release makes the held batch ready,
// at Attempt 1.
func testPerKeyHold(f *fixture) {
	p := f.perKey(2, 2)
	f.add("k", "1", "2", "3")
	ls, _ := f.claim(p)
	require.Len(f.t, ls, 2)
	require.True(f.t, f.finish(ls[0], store.Outcome{Kind: store.Hold, Err: "stop"}))
	f.none()
	st := f.stats()
	require.Equal(f.t, 1, st.Held)
	require.Equal(f.t, 3, st.HeldValues)
	require.Zero(f.t, st.Leased)
	f.ack(ls[1], true)
	f.none()
	ok, err := f.s.Release(f.ctx, f.q, "k")
	require.NoError(f.t, err)
	require.True(f.t, ok)
	ls2, _ := f.claim(p)
	require.Len(f.t, ls2, 2)
	f.values(ls2[0], "k", "1")
	require.Equal(f.t, 1, ls2[0].Attempt)
	f.values(ls2[1], "k", "3")
	f.ack(ls2[1], true)
	f.ack(ls2[0], false)
}

// testPerKeyFairness: a key that just got a lease goes behind the keys
// already waiting, though it may take another.
func testPerKeyFairness(f *fixture) {
	p := f.perKey(2, 1)
	f.add("k", "1", "2")
	f.add("a", "1")
	lk := f.claimOne(p)
	f.values(lk, "k", "1")
	la := f.claimOne(p)
	f.values(la, "a", "1")
	lk2 := f.claimOne(p)
	f.values(lk2, "k", "2")
	f.ack(la, false)
	f.ack(lk2, true)
	f.ack(lk, false)
}

// testPerKeyConcurrent: workers of two processes claim and end batches of
// a few keys at once, with PerKey 3, some lapsing: no key ever has more
// than 3 leases, fences never repeat, and every value is acked once.
func testPerKeyConcurrent(f *fixture) {
	const limit, keys, per = 3, 3, 12
	p := f.perKey(limit, 2)
	p.TTL = 10 * f.tick
	for _, k := range []string{"a", "b", "c"}[:keys] {
		vals := make([]string, per)
		for i := range vals {
			vals[i] = k + string(rune('A'+i))
		}
		f.add(k, vals...)
	}
	var (
		mu     sync.Mutex
		out    = map[string]int{}
		fences = map[uint64]bool{}
		acked  = map[string]bool{}
		failed error
		lapsed time.Duration // the longest a lease that lapsed was held
	)
	fail := func(err error) {
		mu.Lock()
		if failed == nil {
			failed = err
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range 6 {
		st := f.s
		if w%2 == 1 {
			st = f.twin
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(20 * f.late)
			for time.Now().Before(deadline) {
				mu.Lock()
				done := len(acked) == keys*per || failed != nil
				mu.Unlock()
				if done {
					return
				}
				start := time.Now()
				ls, _, err := st.Claim(f.ctx, f.q, p)
				if err != nil {
					fail(err)
					return
				}
				if len(ls) == 0 {
					time.Sleep(f.tick / 4)
					continue
				}
				for _, l := range ls {
					mu.Lock()
					out[l.Key]++
					if out[l.Key] > limit {
						failed = errors.New("key " + l.Key + " had more than PerKey leases at once")
					}
					if fences[l.Fence] {
						failed = errors.New("a fence was handed out twice")
					}
					fences[l.Fence] = true
					mu.Unlock()
					time.Sleep(f.tick / 8)
					mu.Lock()
					out[l.Key]--
					mu.Unlock()
					took := time.Since(start)
					_, err := st.Finish(f.ctx, l, store.Outcome{Kind: store.Ack})
					if errors.Is(err, store.ErrLeaseLost) {
						mu.Lock()
						lapsed = max(lapsed, took) // its batch comes back
						mu.Unlock()
						continue
					}
					if err != nil {
						fail(err)
						return
					}
					mu.Lock()
					for _, v := range l.Values {
						if acked[string(v)] {
							failed = errors.New("value " + string(v) + " acked twice")
						}
						acked[string(v)] = true
					}
					mu.Unlock()
				}
			}
			fail(errors.New("the values were not all acked in time"))
		}()
	}
	wg.Wait()
	if lapsed > 0 {
		// The count of leases out was off: a lapsed lease freed its slot
		// before its Finish.
		f.slow(lapsed, p.TTL, "a lease lapsed while its worker held it")
	}
	require.NoError(f.t, failed)
	require.Len(f.t, acked, keys*per)
	require.Zero(f.t, f.stats().Values)
}
