package storetest

import (
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// inspectOperator returns the Inspector and the Operator of the scenario,
// or skips it when the engine lacks either.
func (f *fixture) inspectOperator() (store.Inspector, store.Operator) {
	f.t.Helper()
	return f.inspector(), f.operator()
}

// ahead checks the Ahead of each key of want, read by Key, and that the
// keys show Ahead 0 in a page.
func (f *fixture) ahead(in store.Inspector, want map[string]int) {
	f.t.Helper()
	page, err := in.Keys(f.ctx, f.q, store.KeyQuery{Limit: 1000})
	require.NoError(f.t, err)
	byKey := f.once(page.Keys)
	for key, n := range want {
		require.Equal(f.t, n, f.keyInfo(in, key).Ahead, "Ahead of key %q", key)
		require.Zero(f.t, byKey[key].Ahead, "Ahead of key %q in a page", key)
	}
}

// testOperateAhead: Key's Ahead of a ready key counts the ready keys that
// a Claim would lease before it: not the paused ones, not those leased,
// held or delayed; a lease that lapsed counts where it lapsed. A key that
// is not ready, or paused, shows 0. A paused queue's keys show where they
// stand.
func testOperateAhead(f *fixture) {
	in, op := f.inspectOperator()
	f.add("l", "l1")
	ll := f.claimOne(one())
	f.add("h", "h1")
	f.finish(f.claimOne(one()), store.Outcome{Kind: store.Hold})
	for _, k := range []string{"a", "b", "c", "d"} {
		f.add(k, k+"1")
	}
	f.addP("w", store.AddParams{Wait: ttl}, "w1")
	f.ahead(in, map[string]int{"a": 0, "b": 1, "c": 2, "d": 3, "l": 0, "h": 0, "w": 0})

	f.pauseKey(op, "b", true)
	f.ahead(in, map[string]int{"a": 0, "b": 0, "c": 1, "d": 2})
	f.expectKey(in, "b", store.KeyInfo{State: store.Ready, Since: time.Now(), Values: 1, Paused: true})

	f.pauseQueue(op, f.q, true)
	f.ahead(in, map[string]int{"a": 0, "c": 1, "d": 2})
	f.resumeQueue(op, f.q, true)

	f.ack(ll, false)
	f.resumeKey(op, "b", true)
	f.ahead(in, map[string]int{"a": 0, "c": 1, "d": 2, "b": 3})
	ls := f.claimAll(2, "a", "c")
	f.ahead(in, map[string]int{"d": 0, "b": 1})
	for _, l := range ls {
		f.ack(l, false)
	}
}

// testOperateAheadBound: Ahead counts up to store.MaxAhead.
func testOperateAheadBound(f *fixture) {
	in, _ := f.inspectOperator()
	const workers = 4
	f.add("first", "1")
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := w; i <= store.MaxAhead; i += workers {
				if err := f.s.Add(f.ctx, f.q, fmt.Sprintf("m%05d", i), bytesOf([]string{"1"}), store.AddParams{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(f.t, err)
	}
	f.add("last", "1")
	require.Equal(f.t, store.MaxAhead, f.keyInfo(in, "last").Ahead, "Ahead of a key behind %d ready keys", store.MaxAhead+2)
	require.Zero(f.t, f.keyInfo(in, "first").Ahead, "Ahead of the first key ready")
}
