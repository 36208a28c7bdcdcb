package redisstore_test

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// hourly lets a key lease once an hour: a key leased once has no token
// for the rest of any test.
var hourly = store.KeyRate{Interval: time.Hour, Burst: 1}

// rateQueue is a queue of a Store on a server of the test's own, so that
// the server's counts of commands are the test's.
type rateQueue struct {
	t *testing.T
	s *redisstore.Store
	c *redis.Client
	q string
}

func newRateQueue(t *testing.T) *rateQueue {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: redistest.StartServer(t).Addr()})
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: "rate"})
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return &rateQueue{t: t, s: s, c: c, q: "q"}
}

// name is the Redis name of the queue's ZSET or other key n.
func (r *rateQueue) name(n string) string { return redisname.KeyPrefix("rate", r.q) + n }

func (r *rateQueue) add(key string, p store.AddParams) {
	r.t.Helper()
	require.NoError(r.t, r.s.Add(r.t.Context(), r.q, key, [][]byte{[]byte("v")}, p))
}

func (r *rateQueue) claim(p store.ClaimParams) ([]string, []store.Lease, time.Duration) {
	r.t.Helper()
	if p.TTL == 0 {
		p.TTL = time.Minute
	}
	if p.MaxBatch == 0 {
		p.MaxBatch = 1
	}
	ls, next, err := r.s.Claim(r.t.Context(), r.q, p)
	require.NoError(r.t, err)
	var keys []string
	for _, l := range ls {
		keys = append(keys, l.Key)
	}
	return keys, ls, next
}

func (r *rateQueue) ack(ls []store.Lease) {
	r.t.Helper()
	for _, l := range ls {
		_, err := r.s.Finish(r.t.Context(), l, store.Outcome{Kind: store.Ack})
		require.NoError(r.t, err)
	}
}

func (r *rateQueue) info(key string) store.KeyInfo {
	r.t.Helper()
	ki, ok, err := r.s.Key(r.t.Context(), r.q, key)
	require.NoError(r.t, err)
	require.True(r.t, ok, "key %q", key)
	return ki
}

// T reads the key's T as the scripts keep it, in µs; 0 if none.
func (r *rateQueue) T(key string) int64 {
	r.t.Helper()
	v, err := r.c.ZScore(r.t.Context(), r.name("rates"), key).Result()
	if err == redis.Nil {
		return 0
	}
	require.NoError(r.t, err)
	return int64(v)
}

// A key that emptied keeps its T: its next values, before T passed, find
// the key without a token. The Claim defers it, with no lease, no fence
// and no attempt, until its token is due, and leases the next ready key
// in its place.
func TestKeyRateOutlivesTheKeysHash(t *testing.T) {
	r := newRateQueue(t)
	ctx := t.Context()
	p := store.ClaimParams{Keys: 1, KeyRate: store.KeyRate{Interval: time.Hour, Burst: 2}}
	r.add("a", store.AddParams{})
	keys, ls, _ := r.claim(p)
	require.Equal(t, []string{"a"}, keys)
	r.ack(ls)
	r.add("a", store.AddParams{})
	keys, ls, _ = r.claim(p)
	require.Equal(t, []string{"a"}, keys, "a burst of 2")
	fence := ls[0].Fence
	r.ack(ls)
	n, err := r.c.Exists(ctx, r.name("k:a"), r.name("v:a")).Result()
	require.NoError(t, err)
	require.Zero(t, n, "a emptied")
	T := r.T("a")
	require.NotZero(t, T)

	r.add("a", store.AddParams{})
	r.add("b", store.AddParams{})
	keys, ls, _ = r.claim(p)
	require.Equal(t, []string{"b"}, keys, "a has no token: b in its place")
	require.Equal(t, fence+1, ls[0].Fence, "a took no fence")
	ki := r.info("a")
	require.Equal(t, store.Deferred, ki.State)
	require.Equal(t, 0, ki.Attempt)
	due := time.UnixMicro(T - time.Hour.Microseconds())
	require.True(t, ki.Until.Equal(due), "until %v, want T - (Burst-1)*Interval = %v", ki.Until, due)
	require.Equal(t, T, r.T("a"), "a deferral takes no token")

	// Its token due now, a is ready again, and its lease is its first
	// attempt.
	require.NoError(t, r.c.ZAdd(ctx, r.name("delayed"), redis.Z{Score: 0, Member: "a"}).Err())
	require.NoError(t, r.c.ZAdd(ctx, r.name("rates"), redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMicro()), Member: "a"}).Err())
	keys, ls, _ = r.claim(p)
	require.Equal(t, []string{"a"}, keys)
	require.Equal(t, 1, ls[0].Attempt)
}
