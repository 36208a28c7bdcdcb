package redisstore_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

func queueNames(t *testing.T, s *redisstore.Store) []string {
	t.Helper()
	qs, err := s.Queues(t.Context())
	require.NoError(t, err)
	out := []string{}
	for _, q := range qs {
		out = append(out, q.Name)
	}
	return out
}

// TestQueues: Queues lists the queues that hold values or dead letters,
// by name, with their counts and the age of their oldest ready value; a
// queue emptied is not listed; another Prefix's queues are not either.
func TestQueues(t *testing.T) {
	s, c, p := newStore(t)
	other, err := redisstore.New(t.Context(), c, redisstore.Config{Prefix: p + ":eu"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })
	ctx := t.Context()
	v := [][]byte{[]byte("v")}

	require.Equal(t, []string{}, queueNames(t, s))
	t0 := time.Now()
	require.NoError(t, s.Add(ctx, "b", "k", v, store.AddParams{}))
	t1 := time.Now()
	require.NoError(t, s.Add(ctx, "b", "k2", v, store.AddParams{}))
	require.NoError(t, s.Add(ctx, "eu:a", "k", v, store.AddParams{Wait: time.Hour}))
	require.NoError(t, s.Add(ctx, "gone", "k", v, store.AddParams{}))
	require.NoError(t, s.Add(ctx, "dead", "k", v, store.AddParams{}))
	require.NoError(t, other.Add(ctx, "a", "k", v, store.AddParams{}))
	for _, q := range []string{"gone", "dead"} {
		ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 1, TTL: time.Hour})
		require.NoError(t, err)
		o := store.Outcome{Kind: store.Ack}
		if q == "dead" {
			o = store.Outcome{Kind: store.Drop, Err: "no"}
		}
		_, err = s.Finish(ctx, ls[0], o)
		require.NoError(t, err)
	}

	qs, err := s.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, qs, 3)
	require.Equal(t, "b", qs[0].Name)
	require.Equal(t, store.Stats{Values: 2, Keys: 2, Ready: 2}, qs[0].Stats)
	within(t, qs[0].Oldest, t0, t1, "oldest ready value")
	require.Equal(t, "dead", qs[1].Name)
	require.Equal(t, store.Stats{Dead: 1}, qs[1].Stats)
	require.Zero(t, qs[1].Oldest)
	require.Equal(t, "eu:a", qs[2].Name)
	require.Equal(t, store.Stats{Values: 1, Keys: 1, Pending: 1}, qs[2].Stats)
	require.Zero(t, qs[2].Oldest, "nothing is ready")
	require.Equal(t, []string{"a"}, queueNames(t, other))

	// A registry lost (or never written, by a version without it) is
	// rebuilt from the queues' own keys, and only from those: a key whose
	// name ends as a queue's meta does is no queue.
	require.NoError(t, s.Add(ctx, "b", "x}:meta", v, store.AddParams{}))
	require.NoError(t, c.Del(ctx, redisname.KeyPrefix(p)+"queues", redisname.KeyPrefix(p+":eu")+"queues").Err())
	require.Equal(t, []string{"b", "dead", "eu:a"}, queueNames(t, s))
	require.Equal(t, []string{"a"}, queueNames(t, other))
	fresh, err := redisstore.New(ctx, c, redisstore.Config{Prefix: p})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fresh.Close() })
	require.Equal(t, []string{"b", "dead", "eu:a"}, queueNames(t, fresh))
}

// TestQueuesOldestReady: QueueInfo.Oldest is when the first value of the
// key at the front of the ready order was added, not the oldest value of
// every ready key.
func TestQueuesOldestReady(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := t.Context()
	q := "q"
	require.NoError(t, s.Add(ctx, q, "old", [][]byte{[]byte("1"), []byte("2")}, store.AddParams{}))
	time.Sleep(10 * time.Millisecond) // far more than slack, on the server's clock too
	t0 := time.Now()
	require.NoError(t, s.Add(ctx, q, "new", [][]byte{[]byte("1")}, store.AddParams{}))
	t1 := time.Now()
	ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Hour})
	require.NoError(t, err)
	require.Equal(t, "old", ls[0].Key)
	_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack}) // "old" is ready again, behind "new"
	require.NoError(t, err)
	qs, err := s.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, qs, 1)
	within(t, qs[0].Oldest, t0, t1, "the first value of the key at the front")
}
