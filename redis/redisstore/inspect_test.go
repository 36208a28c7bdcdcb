package redisstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// slack is how far a time the server stamped may lie outside the local
// instants around the call that stamped it: the server runs on this
// machine's clock, and keeps microseconds.
const slack = 2 * time.Millisecond

// within fails t unless at is in [from, to], give or take slack.
func within(t *testing.T, at, from, to time.Time, what string) {
	t.Helper()
	require.False(t, at.Before(from.Add(-slack)) || at.After(to.Add(slack)), "%s %v not within [%v, %v]", what, at, from, to)
}

// key returns the info of key, which must have values.
func key(t *testing.T, s *redisstore.Store, q, k string) store.KeyInfo {
	t.Helper()
	info, ok, err := s.Key(t.Context(), q, k)
	require.NoError(t, err)
	require.True(t, ok, "key %q has no values", k)
	return info
}

// claimKey leases key k of q, which must be the only key ready.
func claimKey(t *testing.T, s *redisstore.Store, q, k string, p store.ClaimParams) store.Lease {
	t.Helper()
	ls, _, err := s.Claim(t.Context(), q, p)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, k, ls[0].Key)
	return ls[0]
}

// TestKeyStates: Key shows each state with what goes with it: since and
// until, the burst's kind of deadline, the lease's fence, attempt and
// holder, the error of a retry or hold, the count of values and the time
// of the first, every time on the server's clock.
func TestKeyStates(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := t.Context()
	q := "q"
	v := [][]byte{[]byte("a"), []byte("b")}
	long := store.ClaimParams{Keys: 1, TTL: time.Hour, Holder: "host-1"}

	_, ok, err := s.Key(ctx, q, "none")
	require.NoError(t, err)
	require.False(t, ok)

	t0 := time.Now()
	require.NoError(t, s.Add(ctx, q, "quiet", v, store.AddParams{Wait: time.Hour}))
	require.NoError(t, s.Add(ctx, q, "capped", v, store.AddParams{Wait: time.Hour, MaxWait: time.Minute}))
	t1 := time.Now()
	info := key(t, s, q, "quiet")
	require.Equal(t, store.Debouncing, info.State)
	require.False(t, info.MaxWait)
	within(t, info.Until, t0.Add(time.Hour), t1.Add(time.Hour), "quiet's end")
	require.Zero(t, info.Since)
	require.Equal(t, 2, info.Values)
	within(t, info.Oldest, t0, t1, "oldest")
	info = key(t, s, q, "capped")
	require.Equal(t, store.Debouncing, info.State)
	require.True(t, info.MaxWait)
	within(t, info.Until, t0.Add(time.Minute), t1.Add(time.Minute), "max-wait deadline")

	t0 = time.Now()
	require.NoError(t, s.Add(ctx, q, "k", v, store.AddParams{}))
	t1 = time.Now()
	info = key(t, s, q, "k")
	require.Equal(t, store.KeyInfo{Key: "k", State: store.Ready, Since: info.Since, Values: 2, Oldest: info.Oldest}, info)
	within(t, info.Since, t0, t1, "ready since")
	require.Equal(t, info.Since, info.Oldest)

	t0 = time.Now()
	l := claimKey(t, s, q, "k", long)
	t1 = time.Now()
	info = key(t, s, q, "k")
	require.Equal(t, store.Leased, info.State)
	require.Equal(t, "host-1", info.Holder)
	require.Equal(t, l.Fence, info.Fence)
	require.Equal(t, 1, info.Attempt)
	within(t, info.Since, t0, t1, "leased since")
	within(t, info.Until, t0.Add(time.Hour), t1.Add(time.Hour), "lease's end")
	require.Empty(t, info.Err)

	t0 = time.Now()
	_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Retry, After: time.Minute, Err: "boom"})
	require.NoError(t, err)
	t1 = time.Now()
	info = key(t, s, q, "k")
	require.Equal(t, store.Retrying, info.State)
	require.Equal(t, "boom", info.Err)
	require.Equal(t, 1, info.Attempt)
	require.Equal(t, l.Fence, info.Fence)
	require.Empty(t, info.Holder)
	within(t, info.Until, t0.Add(time.Minute), t1.Add(time.Minute), "retry's end")

	// A retry at once is ready, and leased again; its error stays with the
	// key until the batch ends.
	require.NoError(t, s.Add(ctx, q, "h", v, store.AddParams{}))
	l = claimKey(t, s, q, "h", long)
	_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Retry, Err: "again"})
	require.NoError(t, err)
	require.Equal(t, store.Ready, key(t, s, q, "h").State)
	l = claimKey(t, s, q, "h", store.ClaimParams{Keys: 1, TTL: time.Hour, Holder: "host-2"})
	require.Equal(t, 2, l.Attempt)
	info = key(t, s, q, "h")
	require.Equal(t, store.Leased, info.State)
	require.Equal(t, "host-2", info.Holder)
	require.Equal(t, 2, info.Attempt)

	t0 = time.Now()
	_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Hold, Err: "poison"})
	require.NoError(t, err)
	t1 = time.Now()
	info = key(t, s, q, "h")
	require.Equal(t, store.Held, info.State)
	require.Equal(t, "poison", info.Err)
	require.Equal(t, 2, info.Attempt)
	within(t, info.Since, t0, t1, "held since")
	require.Zero(t, info.Until)

	// Released, the key starts over: no attempt, no error.
	released, err := s.Release(ctx, q, "h")
	require.NoError(t, err)
	require.True(t, released)
	info = key(t, s, q, "h")
	require.Equal(t, store.Ready, info.State)
	require.Empty(t, info.Err)
	require.Zero(t, info.Attempt)

	// Acked with values left behind, the key starts over too.
	require.NoError(t, s.Add(ctx, q, "h", v, store.AddParams{}))
	l = claimKey(t, s, q, "h", store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Hour})
	_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Retry, Err: "once"})
	require.NoError(t, err)
	l = claimKey(t, s, q, "h", store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Hour})
	more, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.True(t, more)
	info = key(t, s, q, "h")
	require.Equal(t, store.Ready, info.State)
	require.Empty(t, info.Err)
	require.Equal(t, 3, info.Values)
}

// TestKeyDue: a key whose burst, retry, deferral or lease came due reads
// as ready since it came due, before any Claim moved it.
func TestKeyDue(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := t.Context()
	q := "q"
	v := [][]byte{[]byte("a")}
	short := 20 * time.Millisecond

	t0 := time.Now()
	require.NoError(t, s.Add(ctx, q, "burst", v, store.AddParams{Wait: short}))
	t1 := time.Now()
	require.Equal(t, store.Debouncing, key(t, s, q, "burst").State)

	require.NoError(t, s.Add(ctx, q, "defer", v, store.AddParams{}))
	require.NoError(t, s.Add(ctx, q, "lapse", v, store.AddParams{}))
	ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 2, TTL: short})
	require.NoError(t, err)
	require.Len(t, ls, 2)
	t2 := time.Now()
	for _, l := range ls {
		if l.Key == "defer" {
			_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Defer, After: short})
			require.NoError(t, err)
		}
	}
	t3 := time.Now()
	info := key(t, s, q, "defer")
	require.Equal(t, store.Deferred, info.State)
	within(t, info.Until, t2.Add(short), t3.Add(short), "deferral's end")
	require.Equal(t, 1, info.Attempt, "the deferred lease's")
	require.Equal(t, store.Leased, key(t, s, q, "lapse").State)

	time.Sleep(2 * short) // until the server's clock passed every deadline
	info = key(t, s, q, "burst")
	require.Equal(t, store.Ready, info.State)
	within(t, info.Since, t0.Add(short), t1.Add(short), "ready since the burst's end")
	info = key(t, s, q, "defer")
	require.Equal(t, store.Ready, info.State)
	within(t, info.Since, t2.Add(short), t3.Add(short), "ready since the deferral's end")
	info = key(t, s, q, "lapse")
	require.Equal(t, store.Ready, info.State)
	require.Equal(t, 1, info.Attempt)
	within(t, info.Since, t0, t2.Add(short), "ready since the lapse")

	st, err := s.Stats(ctx, q)
	require.NoError(t, err)
	require.Equal(t, 3, st.Ready, "Key moved nothing, Stats did")

	// A deferral is no attempt: the next lease takes its number.
	ls, _, err = s.Claim(ctx, q, store.ClaimParams{Keys: 3, TTL: time.Hour})
	require.NoError(t, err)
	require.Len(t, ls, 3)
	for _, l := range ls {
		want := map[string]int{"burst": 1, "defer": 1, "lapse": 2}[l.Key]
		require.Equal(t, want, l.Attempt, "key %q", l.Key)
		require.Equal(t, want, key(t, s, q, l.Key).Attempt, "key %q", l.Key)
	}
}

// TestValues: Values gives a key's values from its head, with when each
// was added, those of Adds not folded yet included.
func TestValues(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := t.Context()
	q := "q"
	var times []time.Time
	for i := range 5 {
		times = append(times, time.Now())
		require.NoError(t, s.Add(ctx, q, "k", [][]byte{[]byte(fmt.Sprint(i))}, store.AddParams{}))
	}
	times = append(times, time.Now())
	vs, err := s.Values(ctx, q, "k", 3)
	require.NoError(t, err)
	require.Len(t, vs, 3)
	for i, v := range vs {
		require.Equal(t, fmt.Sprint(i), string(v.Value))
		within(t, v.Added, times[i], times[i+1], "added")
	}
	vs, err = s.Values(ctx, q, "k", 100)
	require.NoError(t, err)
	require.Len(t, vs, 5)
	vs, err = s.Values(ctx, q, "none", 100)
	require.NoError(t, err)
	require.Empty(t, vs)
	vs, err = s.Values(ctx, q, "k", 0)
	require.NoError(t, err)
	require.Empty(t, vs)

	// Leased values are the head's still.
	claimKey(t, s, q, "k", store.ClaimParams{Keys: 1, MaxBatch: 2, TTL: time.Hour})
	vs, err = s.Values(ctx, q, "k", 1)
	require.NoError(t, err)
	require.Equal(t, "0", string(vs[0].Value))
}

// TestFinishAndClaimHolder: the leases of a FinishAndClaim keep its
// holder, and calls of different holders that come together each keep
// their own.
func TestFinishAndClaimHolder(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := t.Context()
	q := "q"
	for _, k := range []string{"a", "b", "c"} {
		require.NoError(t, s.Add(ctx, q, k, [][]byte{[]byte("v")}, store.AddParams{}))
	}
	l := claimKey(t, s, q, "a", store.ClaimParams{Keys: 1, TTL: time.Hour, Holder: "one"})
	ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 1, TTL: time.Hour, Holder: "two"})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	type result struct {
		holder string
		leases []store.Lease
		err    error
	}
	done := make(chan result, 2)
	for _, c := range []struct {
		l      store.Lease
		holder string
	}{{l, "one"}, {ls[0], "two"}} {
		go func() {
			_, got, _, err := s.FinishAndClaim(ctx, c.l, store.Outcome{Kind: store.Ack}, store.ClaimParams{Keys: 1, TTL: time.Hour, Holder: c.holder})
			done <- result{c.holder, got, err}
		}()
	}
	leased := 0
	for range 2 {
		r := <-done
		require.NoError(t, r.err)
		for _, l := range r.leases {
			leased++
			require.Equal(t, r.holder, key(t, s, q, l.Key).Holder, "key %q", l.Key)
		}
	}
	require.Equal(t, 1, leased, "one key was left to claim")
}
