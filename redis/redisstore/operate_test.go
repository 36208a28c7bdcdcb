package redisstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// hour leases a key for long enough that no test sees it lapse.
var hour = store.ClaimParams{Keys: 1, TTL: time.Hour}

// add adds vals to key k of q, ready at once.
func add(t *testing.T, s *redisstore.Store, q, k string, vals ...string) {
	t.Helper()
	bs := make([][]byte, len(vals))
	for i, v := range vals {
		bs[i] = []byte(v)
	}
	require.NoError(t, s.Add(t.Context(), q, k, bs, store.AddParams{}))
}

// claimed claims with p and checks that it leased the keys want, in order.
func claimed(t *testing.T, s *redisstore.Store, q string, p store.ClaimParams, want ...string) ([]store.Lease, time.Duration) {
	t.Helper()
	ls, next, err := s.Claim(t.Context(), q, p)
	require.NoError(t, err)
	got := make([]string, len(ls))
	for i, l := range ls {
		got[i] = l.Key
	}
	if want == nil {
		want = []string{}
	}
	require.Equal(t, want, got, "the keys leased, in order")
	return ls, next
}

// leased claims with p and checks that it leased key k alone.
func leased(t *testing.T, s *redisstore.Store, q string, p store.ClaimParams, k string) store.Lease {
	t.Helper()
	ls, _ := claimed(t, s, q, p, k)
	return ls[0]
}

// TestOperatePauseQueueClaims: a paused queue leases nothing, by Claim or
// by FinishAndClaim, which still finishes, and both say Never; resumed,
// the keys are leased in the order they became ready.
func TestOperatePauseQueueClaims(t *testing.T) {
	s, _, _ := newStore(t)
	ctx, q := t.Context(), "q"
	add(t, s, q, "a", "1")
	add(t, s, q, "b", "1", "2")
	lb := leased(t, s, q, store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Hour}, "a")
	ok, err := s.PauseQueue(ctx, q)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = s.PauseQueue(ctx, q)
	require.NoError(t, err)
	require.False(t, ok, "paused already")

	_, next := claimed(t, s, q, hour)
	require.Equal(t, store.Never, next)
	more, ls, next, err := s.FinishAndClaim(ctx, lb, store.Outcome{Kind: store.Ack}, hour)
	require.NoError(t, err)
	require.False(t, more)
	require.Empty(t, ls)
	require.Equal(t, store.Never, next)
	add(t, s, q, "c", "1")
	st, err := s.Stats(ctx, q)
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 3, Keys: 2, Ready: 2, Paused: true}, st)

	ok, err = s.ResumeQueue(ctx, q)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = s.ResumeQueue(ctx, q)
	require.NoError(t, err)
	require.False(t, ok, "running already")
	ls, _ = claimed(t, s, q, store.ClaimParams{Keys: 3, TTL: time.Hour}, "b", "c")
	require.Len(t, ls[0].Values, 2)
}

// TestOperateResumeQueueWakes: a Wait on a paused queue is woken by the
// ResumeQueue of another process.
func TestOperateResumeQueueWakes(t *testing.T) {
	s, _, p := newStore(t)
	other, err := redisstore.New(t.Context(), client(t), redisstore.Config{Prefix: p})
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })
	ctx, q := t.Context(), "q"
	_, err = other.PauseQueue(ctx, q)
	require.NoError(t, err)
	add(t, s, q, "k", "1")
	_, next := claimed(t, s, q, hour)
	require.Equal(t, store.Never, next)
	woke := make(chan error, 1)
	start := time.Now()
	go func() { woke <- s.Wait(ctx, q, time.Minute) }()
	time.Sleep(50 * time.Millisecond) // the Wait blocks in Redis
	_, err = other.ResumeQueue(ctx, q)
	require.NoError(t, err)
	select {
	case err := <-woke:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("ResumeQueue did not wake the Wait")
	}
	require.Less(t, time.Since(start), 5*time.Second)
	claimed(t, s, q, hour, "k")
}

// TestOperatePauseKeySetAside: a paused key is not leased, whichever way
// it becomes ready (ready when paused, a Finish with values left, a retry
// delay that passed, a lease that lapsed, a Release), and the Claim that
// meets it leases the keys behind it instead; Stats counts it apart.
// Resumed, it goes to the tail of the ready order.
func TestOperatePauseKeySetAside(t *testing.T) {
	s, _, _ := newStore(t)
	ctx, q := t.Context(), "q"
	for _, k := range []string{"more", "retry", "lapse", "held"} {
		add(t, s, q, k, "1", "2")
	}
	one := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Hour}
	lm := leased(t, s, q, one, "more")
	lr := leased(t, s, q, one, "retry")
	leased(t, s, q, store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: 30 * time.Millisecond}, "lapse")
	lh := leased(t, s, q, one, "held")
	add(t, s, q, "ready", "1", "2")
	for _, k := range []string{"ready", "more", "retry", "lapse", "held"} {
		ok, err := s.PauseKey(ctx, q, k)
		require.NoError(t, err)
		require.True(t, ok, k)
	}
	ok, err := s.PauseKey(ctx, q, "more")
	require.NoError(t, err)
	require.False(t, ok, "paused already")

	_, err = s.Finish(ctx, lm, store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	_, err = s.Finish(ctx, lr, store.Outcome{Kind: store.Retry, After: 30 * time.Millisecond})
	require.NoError(t, err)
	_, err = s.Finish(ctx, lh, store.Outcome{Kind: store.Hold})
	require.NoError(t, err)
	_, err = s.Release(ctx, q, "held")
	require.NoError(t, err)
	add(t, s, q, "early", "1")
	add(t, s, q, "free", "1")
	time.Sleep(50 * time.Millisecond) // the retry delay and the lapse pass

	info := key(t, s, q, "lapse")
	require.Equal(t, store.Ready, info.State)
	require.True(t, info.Paused)
	require.Zero(t, info.Ahead, "a paused key is not leased")
	require.Equal(t, 1, key(t, s, q, "free").Ahead, "early; the paused keys do not count")

	// One Claim sets the paused keys aside and leases the keys behind them.
	claimed(t, s, q, store.ClaimParams{Keys: 3, TTL: time.Hour}, "early", "free")
	info = key(t, s, q, "retry")
	require.Equal(t, store.Ready, info.State, "set aside, its values are ready")
	require.True(t, info.Paused)
	require.Equal(t, 1, info.Attempt)
	st, err := s.Stats(ctx, q)
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 11, Keys: 7, Leased: 2, PausedKeys: 5}, st)
	_, next := claimed(t, s, q, hour)
	require.Greater(t, next, 50*time.Minute, "nothing is due but the leases of early and free")
	page, err := s.Keys(ctx, q, store.KeyQuery{})
	require.NoError(t, err)
	require.Len(t, page.Keys, 7, "the keys set aside are in the index")
	for _, k := range page.Keys {
		require.Equal(t, k.Key != "free" && k.Key != "early", k.Paused, k.Key)
		require.Zero(t, k.Ahead, "no Ahead in a page")
	}

	add(t, s, q, "late", "1")
	ok, err = s.ResumeKey(ctx, q, "retry")
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = s.ResumeKey(ctx, q, "retry")
	require.NoError(t, err)
	require.False(t, ok, "resumed already")
	require.Equal(t, 1, key(t, s, q, "retry").Ahead, "behind late")
	ls, _ := claimed(t, s, q, store.ClaimParams{Keys: 5, TTL: time.Hour}, "late", "retry")
	require.Equal(t, 2, ls[1].Attempt, "the retried batch, as it was")
	require.Equal(t, []byte("1"), ls[1].Values[0])
}

// TestOperatePauseKeyEmpty: a key paused before it holds values stays
// paused, Key shows it, and the values added meanwhile wait; a ResumeKey
// of a key that was never paused changes nothing.
func TestOperatePauseKeyEmpty(t *testing.T) {
	s, _, _ := newStore(t)
	ctx, q := t.Context(), "q"
	ok, err := s.ResumeKey(ctx, q, "k")
	require.NoError(t, err)
	require.False(t, ok)
	_, ok, err = s.Key(ctx, q, "k")
	require.NoError(t, err)
	require.False(t, ok)

	ok, err = s.PauseKey(ctx, q, "k")
	require.NoError(t, err)
	require.True(t, ok)
	info, ok, err := s.Key(ctx, q, "k")
	require.NoError(t, err)
	require.True(t, ok, "a paused key without values")
	require.Equal(t, store.KeyInfo{Key: "k", Paused: true}, info)
	st, err := s.Stats(ctx, q)
	require.NoError(t, err)
	require.Equal(t, store.Stats{PausedKeys: 1}, st)

	add(t, s, q, "k", "1")
	_, next := claimed(t, s, q, hour)
	require.Equal(t, store.Never, next)
	ok, err = s.ResumeKey(ctx, q, "k")
	require.NoError(t, err)
	require.True(t, ok)
	claimed(t, s, q, hour, "k")
}

// TestOperateRetryNow: a retrying or deferred key goes to the tail of the
// ready order with its batch and attempt; any other key is left alone.
func TestOperateRetryNow(t *testing.T) {
	s, _, _ := newStore(t)
	ctx, q := t.Context(), "q"
	add(t, s, q, "r", "1")
	add(t, s, q, "d", "1")
	add(t, s, q, "x", "1")
	lr := leased(t, s, q, hour, "r")
	ld := leased(t, s, q, hour, "d")
	_, err := s.Finish(ctx, lr, store.Outcome{Kind: store.Retry, After: time.Hour, Err: "boom"})
	require.NoError(t, err)
	_, err = s.Finish(ctx, ld, store.Outcome{Kind: store.Defer, After: time.Hour})
	require.NoError(t, err)
	add(t, s, q, "r", "2")

	for _, k := range []string{"x", "none"} {
		ok, err := s.RetryNow(ctx, q, k)
		require.NoError(t, err)
		require.False(t, ok, k)
	}
	for _, k := range []string{"d", "r"} {
		ok, err := s.RetryNow(ctx, q, k)
		require.NoError(t, err)
		require.True(t, ok, k)
	}
	info := key(t, s, q, "r")
	require.Equal(t, store.Ready, info.State)
	require.Equal(t, "boom", info.Err)
	require.Equal(t, 2, info.Ahead)
	ls, _ := claimed(t, s, q, store.ClaimParams{Keys: 3, TTL: time.Hour}, "x", "d", "r")
	require.Equal(t, 1, ls[1].Attempt, "a deferral is no attempt")
	require.Equal(t, 2, ls[2].Attempt)
	require.Len(t, ls[2].Values, 1, "the retried batch, without the value behind it")
}

// TestOperateDropKey: DropKey moves all of a key's values, those leased
// and of its open burst included, to one dead letter, ends the lease, and
// keeps the counts, the bound of MaxValues included, exact.
func TestOperateDropKey(t *testing.T) {
	s, _, _ := newStore(t)
	ctx, q := t.Context(), "q"
	add(t, s, q, "k", "1", "2")
	l := leased(t, s, q, store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Hour}, "k")
	require.NoError(t, s.Add(ctx, q, "k", [][]byte{[]byte("3")}, store.AddParams{Wait: time.Hour}))
	add(t, s, q, "other", "1")
	ok, err := s.PauseKey(ctx, q, "k")
	require.NoError(t, err)
	require.True(t, ok)

	n, err := s.DropKey(ctx, q, "k", "operator")
	require.NoError(t, err)
	require.Equal(t, 3, n)
	n, err = s.DropKey(ctx, q, "k", "again")
	require.NoError(t, err)
	require.Zero(t, n, "no values left")

	require.ErrorIs(t, s.Extend(ctx, l, time.Hour), store.ErrLeaseLost)
	_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
	require.ErrorIs(t, err, store.ErrLeaseLost)
	ds, err := s.DeadLetters(ctx, q, 0, 10)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, "k", ds[0].Key)
	require.Equal(t, "operator", ds[0].Err)
	require.Equal(t, 1, ds[0].Attempt)
	require.Equal(t, [][]byte{[]byte("1"), []byte("2"), []byte("3")}, ds[0].Values)
	st, err := s.Stats(ctx, q)
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 1, Keys: 1, Ready: 1, Dead: 1, PausedKeys: 1}, st)
	info, ok, err := s.Key(ctx, q, "k")
	require.NoError(t, err)
	require.True(t, ok, "the pause stays")
	require.Equal(t, store.KeyInfo{Key: "k", Paused: true}, info)

	// The bound counts the value left, not those dropped.
	require.NoError(t, s.Add(ctx, q, "k", [][]byte{[]byte("4")}, store.AddParams{MaxValues: 2}))
	require.ErrorIs(t, s.Add(ctx, q, "k", [][]byte{[]byte("5")}, store.AddParams{MaxValues: 2}), store.ErrFull)

	// A new lease of the key has a larger fence than the lost one.
	_, err = s.ResumeKey(ctx, q, "k")
	require.NoError(t, err)
	ls, _ := claimed(t, s, q, store.ClaimParams{Keys: 2, TTL: time.Hour}, "other", "k")
	require.Greater(t, ls[1].Fence, l.Fence)
	require.Equal(t, 1, ls[1].Attempt)

	ok, err = s.Redrive(ctx, q, ds[0].ID)
	require.NoError(t, err)
	require.True(t, ok)
	vs, err := s.Values(ctx, q, "k", 10)
	require.NoError(t, err)
	require.Len(t, vs, 4, "the value leased, then those redriven")
}
