package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// Memory pages keys in the order they were created, in full pages when
// no filter is set: only the last is short, and it has no Next. Keys
// leased and acked at the front leave no gap, and a key that empties and
// comes back goes last.
func TestMemoryKeysOrder(t *testing.T) {
	ctx := t.Context()
	m := store.NewMemory(store.MemoryConfig{})
	add := func(k string) {
		require.NoError(t, m.Add(ctx, "q", k, [][]byte{[]byte("v")}, store.AddParams{}))
	}
	walk := func(limit int) []string {
		var got []string
		q := store.KeyQuery{Limit: limit}
		for {
			p, err := m.Keys(ctx, "q", q)
			require.NoError(t, err)
			for _, k := range p.Keys {
				got = append(got, k.Key)
			}
			if p.Next == "" {
				return got
			}
			require.Len(t, p.Keys, limit, "a page before the last is full")
			q.Cursor = p.Next
		}
	}
	keys := []string{"\xff", "b", "", "ab", "\x00", "a", "a\x00"}
	for _, k := range keys {
		add(k)
	}
	for limit := 1; limit <= len(keys)+1; limit++ {
		require.Equal(t, keys, walk(limit), "Limit %d", limit)
	}

	for range 4 { // the first four go; the first comes back
		ls, _, err := m.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: time.Hour})
		require.NoError(t, err)
		_, err = m.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
		require.NoError(t, err)
	}
	add(keys[0])
	want := append(slices.Clone(keys[4:]), keys[0])
	for limit := 1; limit <= len(want)+1; limit++ {
		require.Equal(t, want, walk(limit), "Limit %d", limit)
	}

	_, err := m.Keys(ctx, "q", store.KeyQuery{Cursor: "not a cursor"})
	require.ErrorContains(t, err, "KeyQuery.Cursor")
}

// A page of Memory reads at most 2,000 keys: a filter that the last of
// 5,000 keys alone passes gives two empty pages, each with a Next, and
// then that key; without a filter the pages are full.
func TestMemoryKeysBoundedScan(t *testing.T) {
	ctx := t.Context()
	m := store.NewMemory(store.MemoryConfig{})
	for i := range 5000 {
		require.NoError(t, m.Add(ctx, "q", fmt.Sprint("k", i), [][]byte{[]byte("v")}, store.AddParams{}))
	}
	var sizes []int
	q := store.KeyQuery{Prefix: "k4999", Limit: 10}
	for {
		p, err := m.Keys(ctx, "q", q)
		require.NoError(t, err)
		sizes = append(sizes, len(p.Keys))
		if p.Next == "" {
			require.Equal(t, "k4999", p.Keys[0].Key)
			break
		}
		q.Cursor = p.Next
	}
	require.Equal(t, []int{0, 0, 1}, sizes, "the keys shown by each page")

	p, err := m.Keys(ctx, "q", store.KeyQuery{Limit: 1000, Cursor: q.Cursor})
	require.NoError(t, err)
	require.Len(t, p.Keys, 1000, "a page without a filter, from the cursor after 4,000 keys")
	require.Equal(t, "k4000", p.Keys[0].Key)
}

// Memory's default and largest pages: 100 keys when Limit is 0 or less,
// 1000 at most.
func TestMemoryKeysLimit(t *testing.T) {
	ctx := t.Context()
	m := store.NewMemory(store.MemoryConfig{})
	for i := range 1001 {
		require.NoError(t, m.Add(ctx, "q", fmt.Sprint(i), [][]byte{[]byte("v")}, store.AddParams{}))
	}
	for limit, want := range map[int]int{0: 100, -5: 100, 7: 7, 1000: 1000, 5000: 1000} {
		p, err := m.Keys(ctx, "q", store.KeyQuery{Limit: limit})
		require.NoError(t, err)
		require.Len(t, p.Keys, want, "Limit %d", limit)
		require.NotEmpty(t, p.Next)
	}
}

// A queue that a Wait named, or whose values are all gone, holds nothing
// and is not listed; one that keeps only dead letters is.
func TestMemoryQueuesHoldingNothing(t *testing.T) {
	ctx := t.Context()
	m := store.NewMemory(store.MemoryConfig{})
	require.NoError(t, m.Wait(ctx, "waited", time.Nanosecond))
	for _, q := range []string{"acked", "dropped"} {
		require.NoError(t, m.Add(ctx, q, "k", [][]byte{[]byte("v")}, store.AddParams{}))
		ls, _, err := m.Claim(ctx, q, store.ClaimParams{Keys: 1, TTL: time.Minute})
		require.NoError(t, err)
		o := store.Outcome{Kind: store.Ack}
		if q == "dropped" {
			o = store.Outcome{Kind: store.Drop}
		}
		_, err = m.Finish(ctx, ls[0], o)
		require.NoError(t, err)
	}
	qs, err := m.Queues(ctx)
	require.NoError(t, err)
	require.Equal(t, []store.QueueInfo{{Name: "dropped", Stats: store.Stats{Dead: 1}}}, qs)
}

// On Memory's clock, each time an Inspector shows is exactly the instant
// that set it.
func TestMemoryInspectTimes(t *testing.T) {
	ctx := t.Context()
	clk := clock.NewMock()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.Local) // as Memory reads a mock clock
	clk.Set(t0)
	m := store.NewMemory(store.MemoryConfig{Clock: clk})
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	key := func(k string) store.KeyInfo {
		t.Helper()
		info, ok, err := m.Key(ctx, "q", k)
		require.NoError(t, err)
		require.True(t, ok)
		return info
	}
	require.NoError(t, m.Add(ctx, "q", "k", [][]byte{[]byte("1")}, store.AddParams{Wait: time.Second, MaxWait: 3 * time.Second}))
	clk.Add(time.Second / 2)
	require.NoError(t, m.Add(ctx, "q", "k", [][]byte{[]byte("2")}, store.AddParams{Wait: 5 * time.Second, MaxWait: 3 * time.Second}))
	require.Equal(t, store.KeyInfo{Key: "k", State: store.Debouncing, Until: at(3 * time.Second), MaxWait: true, Values: 2, Oldest: at(0)},
		key("k"))
	clk.Add(5 * time.Second / 2)
	require.Equal(t, store.KeyInfo{Key: "k", State: store.Ready, Since: at(3 * time.Second), Values: 2, Oldest: at(0)}, key("k"))

	clk.Add(time.Second)
	ls, _, err := m.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: 2 * time.Second, Holder: "h"})
	require.NoError(t, err)
	require.Equal(t, store.KeyInfo{Key: "k", State: store.Leased, Since: at(4 * time.Second), Until: at(6 * time.Second),
		Attempt: 1, Fence: ls[0].Fence, Holder: "h", Values: 2, Oldest: at(0)}, key("k"))
	clk.Add(2 * time.Second)
	require.Equal(t, store.KeyInfo{Key: "k", State: store.Ready, Since: at(6 * time.Second),
		Attempt: 1, Fence: ls[0].Fence, Values: 2, Oldest: at(0)}, key("k"))
	qs, err := m.Queues(ctx)
	require.NoError(t, err)
	require.Equal(t, []store.QueueInfo{{Name: "q", Stats: store.Stats{Values: 2, Keys: 1, Ready: 1}, Oldest: at(0)}}, qs)

	ls, _, err = m.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: time.Minute})
	require.NoError(t, err)
	clk.Add(time.Second)
	_, err = m.Finish(ctx, ls[0], store.Outcome{Kind: store.Retry, After: 10 * time.Second, Err: "e"})
	require.NoError(t, err)
	require.Equal(t, store.KeyInfo{Key: "k", State: store.Retrying, Until: at(17 * time.Second),
		Attempt: 2, Fence: ls[0].Fence, Err: "e", Values: 2, Oldest: at(0)}, key("k"))
	clk.Add(10 * time.Second)
	ls, _, err = m.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: time.Minute})
	require.NoError(t, err)
	clk.Add(time.Second)
	_, err = m.Finish(ctx, ls[0], store.Outcome{Kind: store.Hold, Err: "h"})
	require.NoError(t, err)
	require.Equal(t, store.KeyInfo{Key: "k", State: store.Held, Since: at(18 * time.Second),
		Attempt: 3, Fence: ls[0].Fence, Err: "h", Values: 2, Oldest: at(0)}, key("k"))

	vs, err := m.Values(ctx, "q", "k", 5)
	require.NoError(t, err)
	require.Equal(t, []store.StoredValue{{Value: []byte("1"), Added: at(0)}, {Value: []byte("2"), Added: at(time.Second / 2)}}, vs)
}
