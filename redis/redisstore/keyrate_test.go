package redisstore_test

import (
	"fmt"
	"maps"
	"slices"
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
	require.True(t, ki.ForToken)
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

	// Deferred by its Finish, it waits for no token.
	_, err = r.s.Finish(ctx, ls[0], store.Outcome{Kind: store.Defer, After: time.Hour})
	require.NoError(t, err)
	ki = r.info("a")
	require.Equal(t, store.Deferred, ki.State)
	require.False(t, ki.ForToken)
}

// A key that empties before its T passed keeps T in rates; the entries
// of rates whose T passed 10 s ago or more go with the next call that
// adds one, and the others stay.
func TestKeyRateForgetsPassedT(t *testing.T) {
	r := newRateQueue(t)
	ctx := t.Context()
	p := store.ClaimParams{Keys: 10, KeyRate: store.KeyRate{Interval: time.Second, Burst: 2}}
	members := func() []string {
		m, err := r.c.ZRange(ctx, r.name("rates"), 0, -1).Result()
		require.NoError(t, err)
		slices.Sort(m)
		return m
	}
	past := func(d time.Duration) float64 { return float64(time.Now().Add(-d).UnixMicro()) }
	require.NoError(t, r.c.ZAdd(ctx, r.name("rates"),
		redis.Z{Score: past(time.Minute), Member: "a"},
		redis.Z{Score: past(time.Minute), Member: "old"},
		redis.Z{Score: past(time.Second), Member: "recent"}).Err())
	r.add("a", store.AddParams{})
	_, ls, _ := r.claim(p)
	require.Len(t, ls, 1, "a's T passed: its bucket is full")
	r.ack(ls)
	require.Equal(t, []string{"a", "old", "recent"}, members(), "a, emptied, moved its entry: no sweep")
	r.add("c", store.AddParams{})
	_, ls, _ = r.claim(p)
	require.Len(t, ls, 1)
	r.ack(ls)
	require.Equal(t, []string{"a", "c", "recent"}, members(), "c, emptied, added one: the sweep took old")
	ttl, err := r.c.PTTL(ctx, r.name("rates")).Result()
	require.NoError(t, err)
	require.InDelta(t, (24*time.Hour + 10*time.Second).Seconds(), ttl.Seconds(), 5, "the set outlives its last write by a day and 10 s")
}

// A Claim defers at most 4 keys for each it wants, and 16 more: then it
// returns what it leased, with a wait of 0, and the next Claim goes on.
func TestKeyRateBoundsDeferralsPerClaim(t *testing.T) {
	r := newRateQueue(t)
	ctx := t.Context()
	const n = 50
	p := store.ClaimParams{Keys: n, TTL: 2 * time.Hour, KeyRate: hourly}
	for i := range n {
		r.add(fmt.Sprintf("k%02d", i), store.AddParams{})
	}
	keys, ls, _ := r.claim(p)
	require.Len(t, keys, n)
	r.ack(ls)
	for i := range n {
		r.add(fmt.Sprintf("k%02d", i), store.AddParams{})
	}
	r.add("fresh", store.AddParams{})
	p.Keys = 1
	delayed := func() int64 {
		c, err := r.c.ZCard(ctx, r.name("delayed")).Result()
		require.NoError(t, err)
		return c
	}
	keys, _, next := r.claim(p)
	require.Empty(t, keys)
	require.Equal(t, time.Duration(0), next, "it stopped at the bound")
	require.Equal(t, int64(4+16), delayed())
	keys, _, next = r.claim(p)
	require.Empty(t, keys)
	require.Equal(t, time.Duration(0), next)
	require.Equal(t, int64(40), delayed())
	keys, _, _ = r.claim(p)
	require.Equal(t, []string{"fresh"}, keys, "behind the last 10 keys without a token")
	require.Equal(t, int64(n), delayed())
	keys, _, next = r.claim(p)
	require.Empty(t, keys)
	require.Greater(t, next, 59*time.Minute, "the first token is due in an hour")
}

// A Claim whose KeyRate is off runs the commands it ran before KeyRate
// existed, and neither reads nor writes rates. One with a KeyRate runs
// the same commands once its keys have T in their hashes (from a lease
// with the rate), and a ZMSCORE of rates more for keys that have none.
func TestKeyRateCostsNoCommand(t *testing.T) {
	r := newRateQueue(t)
	ctx := t.Context()
	rate := store.KeyRate{Interval: time.Microsecond}
	// run leases the first value of 10 keys of 2 values each with prime,
	// then the second values with measured, in a Claim of 5 keys and a
	// FinishAndClaim of 5, whose commands it returns.
	run := func(prime, measured store.KeyRate) map[string]int64 {
		for range 2 {
			for i := range 10 {
				r.add(fmt.Sprint(i), store.AddParams{})
			}
		}
		_, ls, _ := r.claim(store.ClaimParams{Keys: 10, KeyRate: prime})
		require.Len(t, ls, 10)
		r.ack(ls)
		require.NoError(t, r.c.ConfigResetStat(ctx).Err())
		keys, ls, _ := r.claim(store.ClaimParams{Keys: 5, KeyRate: measured})
		require.Len(t, keys, 5)
		_, more, _, err := r.s.FinishAndClaim(ctx, ls[0], store.Outcome{Kind: store.Ack}, store.ClaimParams{Keys: 5, MaxBatch: 1, TTL: time.Minute, KeyRate: measured})
		require.NoError(t, err)
		require.Len(t, more, 5)
		calls := map[string]int64{}
		for name, st := range redistest.ReadCommandStats(t, r.c) {
			calls[name] = int64(st[0])
		}
		r.ack(append(ls[1:], more...))
		return calls
	}
	off := run(store.KeyRate{}, store.KeyRate{})
	n, err := r.c.Exists(ctx, r.name("rates")).Result()
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, off["zmscore"])
	require.Equal(t, off, run(rate, rate), "keys with T in their hashes")
	want := maps.Clone(off)
	want["zmscore"] += 2
	require.Equal(t, want, run(store.KeyRate{}, rate), "keys without")
}

// With tenants, a key deferred for its token takes no turn: its tenant's
// virtual time advances by the leases alone.
func TestKeyRateDeferralTakesNoTurn(t *testing.T) {
	r := newRateQueue(t)
	ctx := t.Context()
	p := store.ClaimParams{Keys: 1, KeyRate: hourly}
	tenant := store.AddParams{Tenant: "A"}
	r.add("a1", tenant)
	keys, ls, _ := r.claim(p)
	require.Equal(t, []string{"a1"}, keys)
	r.ack(ls)
	r.add("a1", tenant)
	r.add("a2", tenant)
	keys, _, _ = r.claim(p)
	require.Equal(t, []string{"a2"}, keys, "a1 deferred, a2 in its place")
	require.Equal(t, store.Deferred, r.info("a1").State)
	v, err := r.c.HGet(ctx, r.name("tvtimes"), "A").Result()
	require.NoError(t, err)
	require.Equal(t, "2", v, "two leases, one turn each")
}

// With PerKey, each lease of a key takes a token: a Claim that leased a
// key up to its burst defers it, whether it has a batch out, a batch kept
// to be leased again, or none.
func TestKeyRatePerKey(t *testing.T) {
	r := newRateQueue(t)
	p := store.ClaimParams{Keys: 4, PerKey: 3, TTL: 2 * time.Hour, KeyRate: store.KeyRate{Interval: time.Hour, Burst: 2}}
	for range 5 {
		r.add("a", store.AddParams{})
	}
	keys, ls, next := r.claim(p)
	require.Equal(t, []string{"a", "a"}, keys, "its burst of 2")
	require.Greater(t, next, 59*time.Minute, "its next token is due in an hour")
	require.Equal(t, 2, r.info("a").Leases)

	// A batch back to be leased again at once: kept, it waits for the
	// token too.
	_, err := r.s.Finish(t.Context(), ls[1], store.Outcome{Kind: store.Retry})
	require.NoError(t, err)
	keys, _, next = r.claim(p)
	require.Empty(t, keys)
	require.Greater(t, next, 59*time.Minute)

	// No batch out or kept: deferred as any key.
	p.KeyRate.Burst = 1
	r.add("b", store.AddParams{})
	keys, ls, _ = r.claim(p)
	require.Equal(t, []string{"b"}, keys)
	r.ack(ls)
	r.add("b", store.AddParams{})
	keys, _, _ = r.claim(p)
	require.Empty(t, keys)
	ki := r.info("b")
	require.Equal(t, store.Deferred, ki.State)
	require.Greater(t, time.Until(ki.Until), 59*time.Minute)
}

// A paused key without a token is set aside as any paused key, not
// deferred: once resumed, the Claim that finds it ready defers it.
func TestKeyRatePausedKey(t *testing.T) {
	r := newRateQueue(t)
	ctx := t.Context()
	p := store.ClaimParams{Keys: 2, KeyRate: hourly}
	r.add("a", store.AddParams{})
	_, ls, _ := r.claim(p)
	r.ack(ls)
	r.add("a", store.AddParams{})
	_, err := r.s.PauseKey(ctx, r.q, "a")
	require.NoError(t, err)
	r.add("b", store.AddParams{})
	keys, ls, _ := r.claim(p)
	require.Equal(t, []string{"b"}, keys)
	r.ack(ls)
	ki := r.info("a")
	require.Equal(t, store.Ready, ki.State, "set aside, not deferred")
	require.True(t, ki.Paused)
	_, err = r.s.ResumeKey(ctx, r.q, "a")
	require.NoError(t, err)
	keys, _, _ = r.claim(p)
	require.Empty(t, keys)
	ki = r.info("a")
	require.Equal(t, store.Deferred, ki.State)
	require.True(t, ki.ForToken)
}
