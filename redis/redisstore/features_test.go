package redisstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// TestFeaturesKey: the queue's features key comes with a pause, a paused
// key, a tenant or a key in multi mode, made through one Store, and the
// next Claim of another Store on the same server honours it; a Claim
// that finds none of them left removes the key, and the queue claims as
// a plain one again.
func TestFeaturesKey(t *testing.T) {
	a, c, p := newStore(t)
	b, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: p})
	require.NoError(t, err)
	defer b.Close()
	ctx, q := t.Context(), "q"
	features := "{" + p + ":" + q + "}:features"
	has := func() bool {
		n, err := c.Exists(ctx, features).Result()
		require.NoError(t, err)
		return n == 1
	}
	ack := func(s *redisstore.Store, l store.Lease) {
		_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
		require.NoError(t, err)
	}

	add(t, a, q, "k", "1")
	ack(b, leased(t, b, q, hour, "k")) // b's Claims have seen a plain queue
	require.False(t, has(), "a queue without features has no features key")

	add(t, a, q, "k", "2")
	_, err = a.PauseQueue(ctx, q)
	require.NoError(t, err)
	require.True(t, has(), "PauseQueue sets the features key")
	_, next := claimed(t, b, q, hour)
	require.Equal(t, store.Never, next, "another Store's Claim sees the pause")
	require.True(t, has(), "a paused queue keeps its features key")
	_, err = a.ResumeQueue(ctx, q)
	require.NoError(t, err)
	ack(b, leased(t, b, q, hour, "k"))
	require.False(t, has(), "the Claim that finds no feature left removes the key")

	add(t, a, q, "k", "3")
	add(t, a, q, "j", "1")
	_, err = a.PauseKey(ctx, q, "k")
	require.NoError(t, err)
	require.True(t, has(), "PauseKey sets the features key")
	ack(b, leased(t, b, q, hour, "j"))
	claimed(t, b, q, hour)
	_, err = a.ResumeKey(ctx, q, "k")
	require.NoError(t, err)
	ack(b, leased(t, b, q, hour, "k"))
	require.False(t, has())

	require.NoError(t, a.Add(ctx, q, "t", [][]byte{[]byte("1")}, store.AddParams{Tenant: "x"}))
	ack(b, leased(t, b, q, hour, "t"))
	require.True(t, has(), "tenants, once named, stay on")

	c2 := hour
	c2.PerKey, c2.MaxBatch, c2.Keys = 2, 1, 2
	_, c3, p3 := newStore(t)
	m, err := redisstore.New(t.Context(), c3, redisstore.Config{Prefix: p3})
	require.NoError(t, err)
	defer m.Close()
	add(t, m, q, "k", "1", "2")
	ls, _ := claimed(t, m, q, c2, "k", "k")
	mf := "{" + p3 + ":" + q + "}:features"
	require.Equal(t, int64(1), c3.Exists(ctx, mf).Val(), "a key in multi mode sets the features key")
	for _, l := range ls {
		ack(m, l)
	}
	claimed(t, m, q, hour)
	require.Equal(t, int64(0), c3.Exists(ctx, mf).Val(), "the last key out of multi mode, the next Claim removes it")
}

// TestPerKeyClaimSeesPauses: a Claim with PerKey > 1, which asks only
// for the pauses and tenants, leases nothing from a paused queue, says
// Never, and sets a paused key aside, also when no key is in multi mode
// yet; once resumed, the keys lease in multi mode, two batches of a key
// at once.
func TestPerKeyClaimSeesPauses(t *testing.T) {
	s, _, _ := newStore(t)
	ctx, q := t.Context(), "q"
	two := store.ClaimParams{Keys: 4, PerKey: 2, MaxBatch: 1, TTL: time.Hour}
	add(t, s, q, "a", "1", "2", "3")
	add(t, s, q, "b", "1", "2", "3")
	_, err := s.PauseQueue(ctx, q)
	require.NoError(t, err)
	_, next := claimed(t, s, q, two)
	require.Equal(t, store.Never, next)
	_, err = s.PauseKey(ctx, q, "a")
	require.NoError(t, err)
	_, err = s.ResumeQueue(ctx, q)
	require.NoError(t, err)
	claimed(t, s, q, two, "b", "b")
	_, err = s.ResumeKey(ctx, q, "a")
	require.NoError(t, err)
	claimed(t, s, q, two, "a", "a")
	_, err = s.PauseQueue(ctx, q)
	require.NoError(t, err)
	_, next = claimed(t, s, q, two)
	require.Equal(t, store.Never, next, "with keys in multi mode too")
}
