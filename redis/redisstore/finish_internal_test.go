package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
	"github.com/pacerkit/pacer/store"
)

// finishTestQueue returns a Store under a prefix of its own and its queue
// "q", whose keys are deleted when t ends.
func finishTestQueue(t *testing.T) (*Store, *queue) {
	t.Helper()
	c := redistest.Client(t)
	var id [6]byte
	_, _ = rand.Read(id[:])
	s, err := New(t.Context(), c, Config{Prefix: "pacertest-" + hex.EncodeToString(id[:])})
	require.NoError(t, err)
	q, err := s.queue(t.Context(), "q")
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = s.Close()
		keys, _ := c.Keys(context.Background(), q.prefix+"*").Result()
		if len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
	})
	return s, q
}

// TestSharedFinishKeepsOrder: one finish call that serves several Finish
// and FinishAndClaim calls ends their leases in the order they came, the
// keys they leave with values become ready in that order, behind the keys
// already waiting, and each claiming call gets its share of the leases.
func TestSharedFinishKeepsOrder(t *testing.T) {
	s, q := finishTestQueue(t)
	ctx := t.Context()

	for _, k := range []string{"a", "b", "c"} {
		require.NoError(t, s.Add(ctx, "q", k, [][]byte{[]byte(k + "1"), []byte(k + "2")}, store.AddParams{}))
	}
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 3, MaxBatch: 1, TTL: time.Minute})
	require.NoError(t, err)
	require.Len(t, ls, 3)
	require.NoError(t, s.Add(ctx, "q", "w", [][]byte{[]byte("w1")}, store.AddParams{})) // waiting already

	one := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute}
	two := store.ClaimParams{Keys: 2, MaxBatch: 1, TTL: time.Minute}
	ack := store.Outcome{Kind: store.Ack}
	calls := []*finishCall{
		{ctx: ctx, l: ls[2], o: ack, p: two},                 // c
		{ctx: ctx, l: ls[0], o: ack, p: one},                 // a
		{ctx: ctx, l: ls[0], o: ack, p: two},                 // a again: lost
		{ctx: ctx, l: ls[1], o: ack, p: store.ClaimParams{}}, // b, claims nothing
	}
	s.finishBatch(q, calls)
	keys := func(c *finishCall) []string {
		var ks []string
		for _, l := range c.leases {
			ks = append(ks, l.Key)
		}
		return ks
	}
	require.NoError(t, calls[0].err)
	require.True(t, calls[0].more)
	require.Equal(t, []string{"w", "c"}, keys(calls[0]))
	require.NoError(t, calls[1].err)
	require.Equal(t, []string{"a"}, keys(calls[1]))
	require.ErrorIs(t, calls[2].err, store.ErrLeaseLost)
	require.Empty(t, calls[2].leases)
	require.NoError(t, calls[3].err)
	require.True(t, calls[3].more)
	require.Empty(t, calls[3].leases)
	ls, _, err = s.Claim(ctx, "q", two)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, "b", ls[0].Key, "b, ended last, is ready last")
}

// TestFinishBatchLeavesEndedCalls: a call of a finish script whose ctx
// ended before it was sent gets its ctx's error and ends nothing, first,
// between or last among calls that go.
func TestFinishBatchLeavesEndedCalls(t *testing.T) {
	s, q := finishTestQueue(t)
	ctx := t.Context()
	gone, leave := context.WithCancel(ctx)
	leave()
	ack := store.Outcome{Kind: store.Ack}
	for _, ended := range [][]bool{{true, false, true}, {false, true, false}, {true, true, true}} {
		for _, k := range []string{"a", "b", "c"} {
			require.NoError(t, s.Add(ctx, "q", k, [][]byte{[]byte(k)}, store.AddParams{}))
		}
		ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 3, MaxBatch: 1, TTL: time.Minute})
		require.NoError(t, err)
		require.Len(t, ls, 3)
		var calls []*finishCall
		for i, l := range ls {
			call := &finishCall{ctx: ctx, l: l, o: ack}
			if ended[i] {
				call.ctx = gone
			}
			calls = append(calls, call)
		}
		s.finishBatch(q, calls)
		for i, call := range calls {
			if ended[i] {
				require.ErrorIs(t, call.err, context.Canceled, "call %d of %v", i, ended)
			} else {
				require.NoError(t, call.err, "call %d of %v", i, ended)
			}
			// Still leased if not sent: its Finish ends it now.
			_, err := s.Finish(ctx, ls[i], ack)
			if ended[i] {
				require.NoError(t, err, "call %d of %v", i, ended)
			} else {
				require.ErrorIs(t, err, store.ErrLeaseLost, "call %d of %v", i, ended)
			}
		}
	}
}
