package storetest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// walk pages through the keys of queue that q selects, from q.Cursor to
// the last page, and returns them in the order the pages showed them;
// between, when not nil, runs after each page but the last. It checks
// that each page holds at most its limit of keys, each passing q's
// filter, and fails if the walk takes more than maxPages pages: pages may
// be short, even empty, but each must make progress. The cursor is only
// passed back.
func (f *fixture) walk(in store.Inspector, queue string, q store.KeyQuery, maxPages int, between func(page int)) []store.KeyInfo {
	f.t.Helper()
	limit := q.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	var out []store.KeyInfo
	for page := 0; ; page++ {
		require.Less(f.t, page, maxPages, "walking the keys of %q with %+v took more than %d pages", queue, q, maxPages)
		p, err := in.Keys(f.ctx, queue, q)
		require.NoError(f.t, err)
		require.LessOrEqual(f.t, len(p.Keys), limit, "a page of Keys with Limit %d", q.Limit)
		for _, k := range p.Keys {
			require.True(f.t, strings.HasPrefix(k.Key, q.Prefix), "Keys with Prefix %q showed %q", q.Prefix, k.Key)
			if q.State != 0 {
				require.Equal(f.t, q.State, k.State, "Keys with State %v showed %q", q.State, k.Key)
			}
		}
		out = append(out, p.Keys...)
		if p.Next == "" {
			return out
		}
		q.Cursor = p.Next
		if between != nil {
			between(page)
		}
	}
}

// once checks that a walk showed no key twice, and returns what it showed
// by key.
func (f *fixture) once(infos []store.KeyInfo) map[string]store.KeyInfo {
	f.t.Helper()
	byKey := make(map[string]store.KeyInfo, len(infos))
	for _, k := range infos {
		_, dup := byKey[k.Key]
		require.False(f.t, dup, "a walk showed key %q twice", k.Key)
		byKey[k.Key] = k
	}
	return byKey
}

// keysIn returns the keys of a walk, sorted.
func keysIn(byKey map[string]store.KeyInfo) []string {
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sorted returns keys, sorted, never nil.
func sorted(keys []string) []string {
	out := append([]string{}, keys...)
	slices.Sort(out)
	return out
}

// testInspectPaging: over a queue of a few hundred keys, a walk of pages
// of any Limit shows each key exactly once and ends, each page holding at
// most its Limit (100 when 0 or less, at most 1000); filters by state and
// by prefix keep what they say. While keys come, go and change state
// between pages, every key that holds values all along (and passes the
// filter all along) is still shown exactly once.
func testInspectPaging(f *fixture) {
	in := f.inspector()
	var gone, stable []string
	for i := range 30 {
		gone = append(gone, fmt.Sprint("gone-", i))
		f.add(gone[i], "v")
	}
	for i := range 300 {
		stable = append(stable, fmt.Sprint("k", i))
		f.add(stable[i], "v")
	}
	all := append(slices.Clone(gone), stable...)
	most := len(all) + 1

	shown := f.once(f.walk(in, f.q, store.KeyQuery{Limit: 7}, most, nil))
	require.Equal(f.t, sorted(all), keysIn(shown), "a walk with Limit 7")
	for _, k := range all {
		sameInfo(f, f.keyInfo(in, k), shown[k], "key %q in a page and from Key", k)
		require.Equal(f.t, store.Ready, shown[k].State)
	}
	for _, limit := range []int{0, -1, 1, 5000} {
		shown := f.once(f.walk(in, f.q, store.KeyQuery{Limit: limit}, most, nil))
		require.Equal(f.t, sorted(all), keysIn(shown), "a walk with Limit %d", limit)
	}
	shown = f.once(f.walk(in, f.q, store.KeyQuery{State: store.Ready, Limit: 7}, most, nil))
	require.Equal(f.t, sorted(all), keysIn(shown), "a walk of the ready keys")
	require.Empty(f.t, f.walk(in, f.q, store.KeyQuery{State: store.Held, Limit: 7}, most, nil), "a walk of the held keys")
	shown = f.once(f.walk(in, f.q, store.KeyQuery{Prefix: "gone-", Limit: 7}, most, nil))
	require.Equal(f.t, sorted(gone), keysIn(shown), "a walk of the keys with prefix %q", "gone-")
	var k1 []string
	for _, k := range stable {
		if strings.HasPrefix(k, "k1") {
			k1 = append(k1, k)
		}
	}
	shown = f.once(f.walk(in, f.q, store.KeyQuery{Prefix: "k1", Limit: 7}, most, nil))
	require.Equal(f.t, sorted(k1), keysIn(shown), "a walk of the keys with prefix %q", "k1")
	require.Empty(f.t, f.walk(in, f.other("b"), store.KeyQuery{Limit: 7}, 2, nil), "a walk of another queue")

	// Between pages: the gone keys are leased and acked, which removes
	// them, one per page; then stable keys are leased, retried or held,
	// which keeps their values; new keys come.
	var added []string
	n := 0
	churn := func(page int) {
		l := f.claimOne(one())
		switch {
		case strings.HasPrefix(l.Key, "gone-"):
			f.ack(l, false)
		case n%3 == 0:
			f.finish(l, store.Outcome{Kind: store.Retry, After: time.Hour})
		case n%3 == 1:
			f.finish(l, store.Outcome{Kind: store.Hold})
		}
		n++
		added = append(added, fmt.Sprint("new-", page))
		f.add(added[len(added)-1], "v")
	}
	shown = f.once(f.walk(in, f.q, store.KeyQuery{Limit: 7}, 2*most, churn))
	require.Greater(f.t, n, len(gone), "the walk took enough pages for stable keys to change state")
	for _, k := range stable {
		require.Contains(f.t, shown, k, "a key that held values all along was not shown")
	}
	for k := range shown {
		require.True(f.t, slices.Contains(all, k) || slices.Contains(added, k), "a walk showed %q, which never held values", k)
	}

	// With a filter: the keys that stay ready all along are each shown
	// once; those that change state between pages may or may not be.
	ready := f.once(f.walk(in, f.q, store.KeyQuery{State: store.Ready, Prefix: "k", Limit: 7}, 2*most, nil))
	changed := map[string]bool{}
	hold := func(int) {
		l := f.claimOne(one())
		changed[l.Key] = true
		f.finish(l, store.Outcome{Kind: store.Hold})
		f.add(fmt.Sprint("k-new-", len(changed)), "v")
	}
	shown = f.once(f.walk(in, f.q, store.KeyQuery{State: store.Ready, Prefix: "k", Limit: 7}, 2*most, hold))
	require.NotEmpty(f.t, changed)
	for k := range ready {
		if !changed[k] {
			require.Contains(f.t, shown, k, "a key that was ready all along was not shown")
		}
	}
}

// inspectKeys are keys whose bytes an engine's prefix match may get
// wrong: the wildcards and escape of SQL's LIKE, separators and hash-tag
// braces of Redis names, bytes that are not UTF-8, NUL, the empty key and
// a long key.
var inspectKeys = []string{
	"", "a", "a%", "a%b", "ab", "a_", "a_b", "axb", "a\\", "a\\b", "a\\\\", "a:", "a:b", "a{", "a{b}", "a}",
	"b", "%", "%x", "_", "_x", "\\", "\\x", "*", "a*", "[a]", "\xff", "\xff\xff", "\xff\xffz", "\xffa",
	"p", "p\xff", "p\xff\xff", "p\xfe", "p\x00", "\x00", "\x00\x00", "ключ", "клюв", "a%" + strings.Repeat("l", 3000),
}

// inspectPrefixes are the prefixes testInspectFilters walks with.
var inspectPrefixes = []string{
	"", "a", "a%", "a_", "a\\", "a\\\\", "a:", "a{", "a*", "[", "%", "_", "\\", "\xff", "\xff\xff", "p\xff", "p",
	"\x00", "клю", "a%" + strings.Repeat("l", 2000), "zz", "a%b\xff",
}

// testInspectFilters: a walk with a Prefix shows exactly the keys that
// start with those bytes, whatever bytes they are, and a walk with a
// State exactly the keys in that state, each once, alone and together.
func testInspectFilters(f *fixture) {
	in := f.inspector()
	hour := time.Hour
	states := []store.KeyState{store.Ready, store.Debouncing, store.Leased, store.Retrying, store.Held, store.Deferred}
	stateOf := map[string]store.KeyState{}
	for i, k := range inspectKeys {
		stateOf[k] = states[i%len(states)]
	}
	// Leased, retrying, held and deferred keys first, one at a time, so
	// that each Claim takes the key just added; then the others.
	for _, k := range inspectKeys {
		var o store.Outcome
		switch stateOf[k] {
		case store.Leased:
		case store.Retrying:
			o = store.Outcome{Kind: store.Retry, After: hour}
		case store.Held:
			o = store.Outcome{Kind: store.Hold}
		case store.Deferred:
			o = store.Outcome{Kind: store.Defer, After: hour}
		default:
			continue
		}
		f.add(k, "v")
		l := f.claimOne(one())
		require.Equal(f.t, k, l.Key)
		if o.Kind != 0 {
			f.finish(l, o)
		}
	}
	for _, k := range inspectKeys {
		switch stateOf[k] {
		case store.Debouncing:
			f.addP(k, store.AddParams{Wait: hour}, "v")
		case store.Ready:
			f.add(k, "v")
		}
	}
	most := len(inspectKeys) + 1
	for _, prefix := range inspectPrefixes {
		for _, state := range append([]store.KeyState{0}, states...) {
			var want []string
			for _, k := range inspectKeys {
				if strings.HasPrefix(k, prefix) && (state == 0 || stateOf[k] == state) {
					want = append(want, k)
				}
			}
			shown := f.once(f.walk(in, f.q, store.KeyQuery{State: state, Prefix: prefix, Limit: 3}, most, nil))
			require.Equal(f.t, sorted(want), keysIn(shown), "a walk with Prefix %q and State %v", prefix, state)
			for k, info := range shown {
				require.Equal(f.t, stateOf[k], info.State, "state of key %q", k)
			}
		}
	}
}
