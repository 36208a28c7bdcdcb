package redisstore_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redisname"
	"github.com/pacerkit/pacer/redis/redisstore"
	"github.com/pacerkit/pacer/store"
)

// pages follows the Next of Keys from the first page with kq, and returns
// the keys of every page, in order, and how many pages it took.
func pages(t *testing.T, s *redisstore.Store, q string, kq store.KeyQuery) ([]store.KeyInfo, int) {
	t.Helper()
	var all []store.KeyInfo
	n := 0
	for {
		page, err := s.Keys(t.Context(), q, kq)
		require.NoError(t, err)
		n++
		limit := kq.Limit
		if limit <= 0 {
			limit = 100
		}
		require.LessOrEqual(t, len(page.Keys), limit)
		all = append(all, page.Keys...)
		if page.Next == "" {
			return all, n
		}
		require.Less(t, n, 10000, "paging does not end")
		kq.Cursor = page.Next
	}
}

func names(infos []store.KeyInfo) []string {
	out := make([]string, len(infos))
	for i, k := range infos {
		out[i] = k.Key
	}
	return out
}

// oddKeys are keys whose bytes test the order and the prefix ranges: the
// empty key, bytes 0 and 0xff, prefixes of one another.
var oddKeys = []string{"", "\x00", "a", "a\x00", "a\xff", "a\xff\xff", "ab", "b", "\xff", "\xff\xff", "\xff\xffz", "{x}", "[a", "(a", "-", "+"}

// TestKeysPages: the pages of a queue's keys give each key once, in the
// order of their bytes, whatever the Limit; a prefix keeps the keys that
// start with it; the last page's Next is "".
func TestKeysPages(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := t.Context()
	q := "q"
	keys := slices.Clone(oddKeys)
	for i := range 120 {
		keys = append(keys, fmt.Sprintf("user:%03d", i), fmt.Sprintf("order:%03d", i))
	}
	for _, k := range keys {
		require.NoError(t, s.Add(ctx, q, k, [][]byte{[]byte("v")}, store.AddParams{}))
	}
	slices.Sort(keys)
	for _, limit := range []int{0, 1, 7, 100, 1000, 5000} {
		got, n := pages(t, s, q, store.KeyQuery{Limit: limit})
		require.Equal(t, keys, names(got), "Limit %d", limit)
		per := limit
		switch {
		case limit == 0:
			per = 100
		case limit > 1000:
			per = 1000
		}
		require.Equal(t, (len(keys)+per-1)/per, n, "Limit %d: a full last page has no Next", limit)
	}
	for _, prefix := range []string{"user:", "user:01", "a", "a\xff", "\xff", "\xff\xff", "", "zz", "[", "("} {
		want := []string{}
		for _, k := range keys {
			if strings.HasPrefix(k, prefix) {
				want = append(want, k)
			}
		}
		got, _ := pages(t, s, q, store.KeyQuery{Prefix: prefix, Limit: 3})
		require.Equal(t, want, names(got), "prefix %q", prefix)
	}

	// A cursor from a page without the prefix starts at the prefix.
	page, err := s.Keys(ctx, q, store.KeyQuery{Limit: 1})
	require.NoError(t, err)
	page, err = s.Keys(ctx, q, store.KeyQuery{Prefix: "user:", Cursor: page.Next, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, []string{"user:000"}, names(page.Keys))

	_, err = s.Keys(ctx, q, store.KeyQuery{Cursor: "nonsense"})
	require.ErrorContains(t, err, "Cursor")
	_, err = s.Keys(ctx, q, store.KeyQuery{State: 99})
	require.ErrorContains(t, err, "State")

	page, err = s.Keys(ctx, "empty", store.KeyQuery{})
	require.NoError(t, err)
	require.Empty(t, page.Keys)
	require.Empty(t, page.Next)
}

// TestKeysFilter: a state filter keeps the keys in that state, over pages
// that may be short, even empty, when few keys pass it: a page reads a
// bounded part of the index.
func TestKeysFilter(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := t.Context()
	q := "q"
	var all []string
	for i := range 2500 {
		all = append(all, fmt.Sprintf("k%04d", i))
	}
	// Pipelined, for speed: the order of the Adds does not matter.
	errs := make(chan error, len(all))
	for _, k := range all {
		go func() { errs <- s.Add(ctx, q, k, [][]byte{[]byte("v"), []byte("v")}, store.AddParams{}) }()
	}
	for range all {
		require.NoError(t, <-errs)
	}
	held := []string{"k0003", "k1500", "k2499"}
	for _, k := range held {
		require.NoError(t, s.Add(ctx, q, k, [][]byte{[]byte("w")}, store.AddParams{}))
	}
	// Lease every key's first value once (the keys acked go behind the
	// others), then hold those three and ack the others, which are ready
	// again with one value.
	for leased := 0; leased < len(all); {
		ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: min(500, len(all)-leased), MaxBatch: 1, TTL: time.Hour})
		require.NoError(t, err)
		require.NotEmpty(t, ls)
		leased += len(ls)
		for _, l := range ls {
			o := store.Outcome{Kind: store.Ack}
			if slices.Contains(held, l.Key) {
				o = store.Outcome{Kind: store.Hold, Err: "held " + l.Key}
			}
			_, err := s.Finish(ctx, l, o)
			require.NoError(t, err)
		}
	}
	got, n := pages(t, s, q, store.KeyQuery{State: store.Held, Limit: 2})
	require.Equal(t, held, names(got))
	for _, k := range got {
		require.Equal(t, store.Held, k.State)
		require.Equal(t, "held "+k.Key, k.Err)
		require.Equal(t, 3, k.Values)
	}
	require.GreaterOrEqual(t, n, 3, "a page read at most 1,000 keys")
	got, _ = pages(t, s, q, store.KeyQuery{State: store.Ready})
	require.Equal(t, slices.DeleteFunc(slices.Clone(all), func(k string) bool { return slices.Contains(held, k) }), names(got))
	got, _ = pages(t, s, q, store.KeyQuery{State: store.Leased})
	require.Empty(t, got)
	got, _ = pages(t, s, q, store.KeyQuery{State: store.Held, Prefix: "k15"})
	require.Equal(t, []string{"k1500"}, names(got))
}

// TestKeysWhileKeysChange: a key that holds values all along is shown
// exactly once over the pages, while other keys come and go between them.
func TestKeysWhileKeysChange(t *testing.T) {
	s, _, _ := newStore(t)
	ctx := t.Context()
	q := "q"
	var stay []string
	for i := range 60 {
		k := fmt.Sprintf("s%02d", i)
		stay = append(stay, k)
		require.NoError(t, s.Add(ctx, q, k, [][]byte{[]byte("v")}, store.AddParams{Wait: time.Hour}))
	}
	var seen []string
	kq := store.KeyQuery{Limit: 7}
	for round := 0; ; round++ {
		page, err := s.Keys(ctx, q, kq)
		require.NoError(t, err)
		for _, k := range page.Keys {
			if strings.HasPrefix(k.Key, "s") {
				seen = append(seen, k.Key)
			}
		}
		if page.Next == "" {
			break
		}
		kq.Cursor = page.Next
		// Keys come before and after the cursor, and go.
		for _, k := range []string{fmt.Sprintf("s%02d-%d", round*7, round), fmt.Sprintf("s%02d+", round*7+20), "a", "z"} {
			require.NoError(t, s.Add(ctx, q, k, [][]byte{[]byte("v")}, store.AddParams{}))
		}
		for {
			ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 10, TTL: time.Hour})
			require.NoError(t, err)
			if len(ls) == 0 {
				break
			}
			for _, l := range ls {
				_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
				require.NoError(t, err)
			}
		}
	}
	require.Equal(t, stay, slices.DeleteFunc(seen, func(k string) bool { return len(k) != 3 }))
}

// TestKeysIndexesOldQueues: a queue whose keys a version without the index
// gave values, or emptied, is listed right: Keys indexes it first.
func TestKeysIndexesOldQueues(t *testing.T) {
	s, c, p := newStore(t)
	ctx := t.Context()
	q := "q"
	index := redisname.KeyPrefix(p, q) + "keys"
	var keys []string
	for i := range 1200 {
		keys = append(keys, fmt.Sprintf("k%04d", i))
	}
	for i, k := range keys {
		wait := store.AddParams{}
		if i%3 == 0 {
			wait.Wait = time.Hour
		}
		require.NoError(t, s.Add(ctx, q, k, [][]byte{[]byte("v")}, wait))
	}
	ls, _, err := s.Claim(ctx, q, store.ClaimParams{Keys: 300, TTL: time.Hour})
	require.NoError(t, err)
	for i, l := range ls {
		if i%2 == 0 {
			_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Hold})
			require.NoError(t, err)
		}
	}
	// As a version without the index would have left it: no index, then
	// one that misses keys and holds keys without values.
	require.NoError(t, c.Del(ctx, index).Err())
	got, _ := pages(t, s, q, store.KeyQuery{Limit: 1000})
	require.Equal(t, keys, names(got))
	require.EqualValues(t, len(keys), c.ZCard(ctx, index).Val())

	require.NoError(t, c.ZRem(ctx, index, "k0001", "k0500", "k1199").Err())
	require.NoError(t, c.ZAdd(ctx, index, redis.Z{Member: "gone"}, redis.Z{Member: "k0500x"}).Err())
	got, _ = pages(t, s, q, store.KeyQuery{Limit: 1000})
	require.Equal(t, keys, names(got))
	require.EqualValues(t, len(keys), c.ZCard(ctx, index).Val())
}
