package local

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// With PerKey 2, a key's first two batches are out at once; Key counts
// its leases; a retried batch comes back before the values never leased,
// and the key takes no new lease while it waits out its delay; each Ack
// removes its own batch.
func TestPerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		e, err := New(Config[string, int]{MaxBatch: 1, PerKey: 2})
		require.NoError(t, err)
		defer e.Close()
		put(t, e, "k", 1, 2, 3)
		l1 := must(e.Get(ctx))
		l2 := must(e.Get(ctx))
		require.Equal(t, []int{1}, l1.Values)
		require.Equal(t, []int{2}, l2.Values)
		info := keyInfo(t, e, "k").Info
		require.Equal(t, store.Leased, info.State)
		require.Equal(t, 2, info.Leases)
		require.Equal(t, 3, info.Values)
		require.Equal(t, 2, must(e.Gauges(ctx)).InFlight)

		require.NoError(t, end(t, e, l1, store.Retry, time.Second))
		info = keyInfo(t, e, "k").Info
		require.Equal(t, store.Leased, info.State)
		require.Zero(t, info.Leases, "counted when several are out, as the store does")
		t0 := time.Now()
		l1 = must(e.Get(ctx)) // 3 waits behind the retried 1
		require.Equal(t, time.Second, time.Since(t0))
		require.Equal(t, []int{1}, l1.Values)
		require.Equal(t, 2, l1.Attempt)
		require.True(t, must(ack(e, l2)), "1 and 3 are left")
		l3 := must(e.Get(ctx))
		require.Equal(t, []int{3}, l3.Values)
		require.True(t, must(ack(e, l3)))
		require.False(t, must(ack(e, l1)))
		require.Equal(t, engine.KeyState{}, keyInfo(t, e, "k"))
	})
}

// Carrying keeps each lease of a key apart: batches of one key finish in
// any order.
func TestPerKeyCarrying(t *testing.T) {
	ctx := context.Background()
	left := map[string][]int{}
	c, err := NewCarrying(Config[string, int]{MaxBatch: 1, PerKey: 3, Left: func(key string, vs []int) {
		left[key] = append(left[key], vs...)
	}}, func(context.Context) []byte { return []byte("c") })
	require.NoError(t, err)
	for v := range 4 {
		require.NoError(t, c.Put(ctx, "k", v))
	}
	ls := []engine.Lease[string, int]{must(c.Get(ctx)), must(c.Get(ctx)), must(c.Get(ctx))}
	for i, l := range ls {
		require.Equal(t, []int{i}, l.Values)
		require.Equal(t, [][]byte{[]byte("c")}, l.Carried)
	}
	require.True(t, must(c.Finish(ctx, ls[2], store.Outcome{Kind: store.Ack})))
	require.True(t, must(c.Finish(ctx, ls[0], store.Outcome{Kind: store.Hold})))
	require.True(t, must(c.Finish(ctx, ls[1], store.Outcome{Kind: store.Ack})))
	c.Close()
	require.Equal(t, map[string][]int{"k": {0, 3}}, left, "the held batch, then the value never leased")
}
