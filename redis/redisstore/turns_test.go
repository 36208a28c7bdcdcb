package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// A Claim of several keys takes each from the tenant whose turn is first
// at that moment: a tenant it advanced to the virtual time of a turn
// further on, with a smaller name, comes before that turn and those
// between, as a Claim of one key at a time would take them. Here a joins
// at 0 behind b and c at 1: a, then a again (at 1, before b), then b.
func TestClaimTakesAdvancedTurnBeforeTiesWithLargerNames(t *testing.T) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr()})
	defer c.Close()
	s, err := redisstore.New(ctx, c, redisstore.Config{Prefix: "turns"})
	require.NoError(t, err)
	defer s.Close()
	const q = "q"
	add := func(key, tenant string) {
		require.NoError(t, s.Add(ctx, q, key, [][]byte{[]byte("v")}, store.AddParams{Tenant: tenant}))
	}
	claim := func(n int) []string {
		ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: n, MaxBatch: 1, TTL: time.Minute})
		require.NoError(t, err)
		var keys []string
		for _, l := range ls {
			keys = append(keys, l.Key)
		}
		return keys
	}
	add("b1", "b")
	add("b2", "b")
	add("c1", "c")
	add("c2", "c")
	require.Equal(t, []string{"b1", "c1"}, claim(2)) // b and c at 1, the clock at 0
	add("a1", "a")
	add("a2", "a")
	require.Equal(t, []string{"a1", "a2", "b2"}, claim(3))
}

// A tenant whose turn ended ahead of the queue's clock keeps its virtual
// time: a key of it that comes ready later waits behind a tenant that
// joins at the clock, even one with a larger name. Here a leases once
// (a at 1, the clock at 0), its turn ends at the next Claim; then a2 and
// b2 come ready in one call, and in another queue a2, b2 and c2: b and
// c, at 0, come first.
func TestTenantComesBackAtItsOwnTime(t *testing.T) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr()})
	defer c.Close()
	s, err := redisstore.New(ctx, c, redisstore.Config{Prefix: "back"})
	require.NoError(t, err)
	defer s.Close()
	const q = "q"
	add := func(q, key, tenant string) {
		require.NoError(t, s.Add(ctx, q, key, [][]byte{[]byte("v")}, store.AddParams{Tenant: tenant}))
	}
	claim := func(q string) []string {
		ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute})
		require.NoError(t, err)
		var keys []string
		for _, l := range ls {
			keys = append(keys, l.Key)
			_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
			require.NoError(t, err)
		}
		return keys
	}
	for _, tenants := range [][]string{{"a", "b"}, {"a", "b", "c"}} {
		q := fmt.Sprint(q, len(tenants))
		add(q, "a1", "a")
		require.Equal(t, []string{"a1"}, claim(q))
		require.Empty(t, claim(q))
		for _, g := range tenants {
			add(q, g+"2", g) // folded by the next Claim, in one call
		}
		var got []string
		for range tenants {
			got = append(got, claim(q)...)
		}
		want := append(slices.Clone(tenants[1:]), "a")
		for i := range want {
			want[i] += "2"
		}
		require.Equal(t, want, got, "tenants %v", tenants)
	}
}

// A user whose ACL denies OBJECT claims a queue with tenants as any other
// user does: the turns stay in Redis's listpack encoding, which only
// costs time. Here a Claim of 6 keys advances 3 turns, the fewest at which
// a Claim asks for the encoding.
func TestTenantClaimWithoutObjectCommand(t *testing.T) {
	ctx := context.Background()
	addr := redistest.StartServer(t).Addr()
	admin := redis.NewClient(&redis.Options{Addr: addr})
	defer admin.Close()
	require.NoError(t, admin.Do(ctx, "ACL", "SETUSER", "app", "on", ">secret", "~*", "&*", "+@all", "-object").Err())
	require.NoError(t, admin.Set(ctx, "any", "v", 0).Err())
	c := redis.NewClient(&redis.Options{Addr: addr, Username: "app", Password: "secret"})
	defer c.Close()
	require.ErrorContains(t, c.ObjectEncoding(ctx, "any").Err(), "NOPERM", "the ACL denies OBJECT")
	s, err := redisstore.New(ctx, c, redisstore.Config{Prefix: "acl"})
	require.NoError(t, err)
	defer s.Close()
	for _, g := range []string{"a", "b", "c"} {
		for i := range 3 {
			key := fmt.Sprintf("%s%d", g, i)
			require.NoError(t, s.Add(ctx, "q", key, [][]byte{[]byte("v")}, store.AddParams{Tenant: g}))
		}
	}
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 6, MaxBatch: 1, TTL: time.Minute})
	require.NoError(t, err)
	var keys []string
	for _, l := range ls {
		keys = append(keys, l.Key)
	}
	require.Equal(t, []string{"a0", "b0", "c0", "a1", "b1", "c1"}, keys)
	require.Equal(t, "listpack", admin.ObjectEncoding(ctx, "{acl:q}:turns").Val())
}

// A Finish that claims in a queue with tenants learns from its lease
// that the queue has them, and asks only for the other features: it
// leases nothing while the queue is paused, not the key paused while its
// lease was out (which the Finish makes ready again), and a key without a
// tenant that an Add, folded by the same call, made ready.
func TestTenantFinishAndClaimSeesPauses(t *testing.T) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr()})
	defer c.Close()
	s, err := redisstore.New(ctx, c, redisstore.Config{Prefix: "fp"})
	require.NoError(t, err)
	defer s.Close()
	add := func(key, tenant string) {
		require.NoError(t, s.Add(ctx, "q", key, [][]byte{[]byte("v")}, store.AddParams{Tenant: tenant}))
	}
	claim := func() store.Lease {
		ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		return ls[0]
	}
	for _, k := range []string{"a1", "a2", "b1", "b2"} {
		add(k, k[:1])
	}
	p := store.ClaimParams{Keys: 10, MaxBatch: 1, TTL: time.Minute}
	l := claim()
	_, err = s.PauseQueue(ctx, "q")
	require.NoError(t, err)
	_, got, _, err := s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Retry}, p)
	require.NoError(t, err)
	require.Empty(t, got, "the queue is paused")
	_, err = s.ResumeQueue(ctx, "q")
	require.NoError(t, err)
	l = claim()
	_, err = s.PauseKey(ctx, "q", l.Key)
	require.NoError(t, err)
	add("c1", "")
	_, got, _, err = s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Retry}, p)
	require.NoError(t, err)
	var keys []string
	for _, l := range got {
		keys = append(keys, l.Key)
	}
	want := slices.DeleteFunc([]string{"a1", "a2", "b1", "b2", "c1"}, func(k string) bool { return k == l.Key })
	slices.Sort(keys)
	require.Equal(t, want, keys)
}
