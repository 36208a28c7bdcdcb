package main

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// The keys that seed puts in queue "mail", one per state a table shows.
const (
	mailQueue = "mail"
	heldKey   = "held"
	retryKey  = "retrying"
	leasedKey = "leased"
	valuesKey = "values"
	tabKey    = "tab\tkey"
	burstKey  = "burst"
)

// The values of valuesKey, one per form that values shows.
var (
	jsonValue = []byte(`{"to": "a@example.com", "n": 1}`)
	textValue = []byte("hello world")
	binValue  = []byte{0xff, 0x00, 0x01}
)

// seed fills queue mail of e's store: a held key, a retrying one, a
// leased one, two keys with ready values (one not printable), a
// debouncing one, and two dead letters. It returns the IDs of the dead
// letters, of dead1 and of dead2.
func seed(t *testing.T, e engine) (dead1, dead2 uint64) {
	t.Helper()
	ctx := t.Context()
	s := e.st
	// finish adds a value to key, leases it (it is the only key ready)
	// and ends the lease with o, unless o is zero.
	finish := func(key string, o store.Outcome) {
		require.NoError(t, s.Add(ctx, mailQueue, key, [][]byte{[]byte(`"` + key + `"`)}, store.AddParams{}))
		ls, _, err := s.Claim(ctx, mailQueue, store.ClaimParams{Keys: 1, TTL: time.Hour, Holder: "worker-1"})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		require.Equal(t, key, ls[0].Key)
		if o.Kind != 0 {
			_, err = s.Finish(ctx, ls[0], o)
			require.NoError(t, err)
		}
	}
	finish(heldKey, store.Outcome{Kind: store.Hold, Err: "mailbox full"})
	finish(retryKey, store.Outcome{Kind: store.Retry, After: time.Hour, Err: "timeout"})
	finish("dead1", store.Outcome{Kind: store.Drop, Err: "bounced"})
	finish("dead2", store.Outcome{Kind: store.Drop, Err: "bounced\ntwice"})
	finish(leasedKey, store.Outcome{})
	require.NoError(t, s.Add(ctx, mailQueue, valuesKey, [][]byte{jsonValue, textValue, binValue}, store.AddParams{}))
	require.NoError(t, s.Add(ctx, mailQueue, tabKey, [][]byte{[]byte("x")}, store.AddParams{}))
	require.NoError(t, s.Add(ctx, mailQueue, burstKey, [][]byte{[]byte("b")}, store.AddParams{Wait: time.Hour}))
	ds, err := s.(store.DeadLetters).DeadLetters(ctx, mailQueue, 0, 10)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	return ds[0].ID, ds[1].ID
}

// stamp is how a table shows an instant: an age, then RFC 3339.
var stamp = regexp.MustCompile(`^(\d+ms|\d+s|\d+m\d\ds|\d+h\d\dm|\d+d\d\dh) ago \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$`)

// future is how a table shows an instant to come.
var future = regexp.MustCompile(`^in (\d+ms|\d+s|\d+m\d\ds|\d+h\d\dm|\d+d\d\dh) \(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)$`)

func TestQueues(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		seed(t, e)
		out := ok(t, e.with("queues")...)
		require.True(t, strings.HasPrefix(out, "QUEUE "), out)
		rs := rows(t, out)
		require.Len(t, rs, 1, out)
		// QUEUE STATE KEYS VALUES READY DEBOUNCING LEASED RETRYING HELD PAUSED-KEYS DEAD OLDEST
		assert.Equal(t, []string{mailQueue, "running", "6", "8", "2", "1", "1", "1", "1", "0", "2"}, rs[0][:11], out)
		assert.Regexp(t, stamp, rs[0][11])

		want, err := e.st.(store.Inspector).Queues(t.Context())
		require.NoError(t, err)
		require.JSONEq(t, jsonOf(t, want), ok(t, e.with("queues", "-json")...))
		// The store flags may come before the command's name, -json too.
		require.JSONEq(t, jsonOf(t, want), ok(t, append(e.with("-json"), "queues")...))
	})
}

func TestQueuesEmpty(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		require.Equal(t, "[]\n", ok(t, e.with("queues", "-json")...))
		out := ok(t, e.with("queues")...)
		require.Empty(t, rows(t, out), out)
	})
}

func TestKeys(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		seed(t, e)
		out := ok(t, e.with("keys", mailQueue)...)
		require.True(t, strings.HasPrefix(out, "KEY "), out)
		byKey := map[string][]string{}
		for _, r := range rows(t, out) {
			byKey[r[0]] = r
		}
		require.Len(t, byKey, 6, out)
		// KEY STATE VALUES ATTEMPT SINCE UNTIL OLDEST NOTES
		held := byKey[heldKey]
		assert.Equal(t, []string{heldKey, "held", "1", "1"}, held[:4])
		assert.Regexp(t, stamp, held[4])
		assert.Equal(t, "-", held[5])
		assert.Regexp(t, stamp, held[6])
		assert.Contains(t, held[7], "error: mailbox full")
		retry := byKey[retryKey]
		assert.Equal(t, []string{retryKey, "retrying", "1", "1", "-"}, retry[:5])
		assert.Regexp(t, future, retry[5])
		assert.Contains(t, retry[7], "error: timeout")
		leased := byKey[leasedKey]
		assert.Equal(t, []string{leasedKey, "leased", "1", "1"}, leased[:4])
		assert.Regexp(t, future, leased[5])
		assert.Contains(t, leased[7], "holder worker-1")
		assert.Equal(t, []string{valuesKey, "ready", "3", "0"}, byKey[valuesKey][:4])
		assert.Equal(t, "debouncing", byKey[burstKey][1])
		assert.Regexp(t, future, byKey[burstKey][5])
		// A key with a tab shows Go-quoted.
		assert.Equal(t, "ready", byKey[`"tab\tkey"`][1], out)

		want, err := e.st.(store.Inspector).Keys(t.Context(), mailQueue, store.KeyQuery{})
		require.NoError(t, err)
		require.JSONEq(t, jsonOf(t, want), ok(t, e.with("keys", mailQueue, "-json")...))

		// Flags after the queue, and before it.
		for _, args := range [][]string{{"keys", mailQueue, "-state", "held"}, {"keys", "-state", "held", mailQueue}} {
			rs := rows(t, ok(t, e.with(args...)...))
			require.Len(t, rs, 1)
			assert.Equal(t, heldKey, rs[0][0])
		}
		rs := rows(t, ok(t, e.with("keys", mailQueue, "-prefix", "re")...))
		require.Len(t, rs, 1)
		assert.Equal(t, retryKey, rs[0][0])
	})
}

// TestKeysPages follows the -cursor of each page to the last, and sees
// each key once.
func TestKeysPages(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		seed(t, e)
		var seen []string
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 10, "pages")
			args := e.with("keys", mailQueue, "-limit", "2")
			if cursor != "" {
				args = append(args, "-cursor", cursor)
			}
			out := ok(t, args...)
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			last := lines[len(lines)-1]
			next, more := strings.CutPrefix(last, "next page: -cursor ")
			if more {
				lines = lines[:len(lines)-1]
			}
			for _, l := range lines[1:] {
				seen = append(seen, cells(l)[0])
			}
			if !more {
				break
			}
			cursor = next
		}
		slices.Sort(seen)
		require.Equal(t, []string{`"tab\tkey"`, burstKey, heldKey, leasedKey, retryKey, valuesKey}, seen)

		var page store.KeyPage
		require.NoError(t, json.Unmarshal([]byte(ok(t, e.with("keys", mailQueue, "-limit", "2", "-json")...)), &page))
		require.Len(t, page.Keys, 2)
		require.NotEmpty(t, page.Next)
	})
}

func TestValues(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		seed(t, e)
		out := ok(t, e.with("values", mailQueue, valuesKey)...)
		rs := rows(t, out)
		require.Len(t, rs, 3, out)
		assert.Regexp(t, stamp, rs[0][1])
		assert.Equal(t, []string{"1", "json", `{"to":"a@example.com","n":1}`}, []string{rs[0][0], rs[0][2], rs[0][3]})
		assert.Equal(t, []string{"2", "text", "hello world"}, []string{rs[1][0], rs[1][2], rs[1][3]})
		assert.Equal(t, []string{"3", "hex", "ff0001"}, []string{rs[2][0], rs[2][2], rs[2][3]})

		want, err := e.st.(store.Inspector).Values(t.Context(), mailQueue, valuesKey, 20)
		require.NoError(t, err)
		got := ok(t, e.with("values", mailQueue, valuesKey, "-json")...)
		require.JSONEq(t, jsonOf(t, want), got)
		var vals []store.StoredValue
		require.NoError(t, json.Unmarshal([]byte(got), &vals))
		require.Equal(t, [][]byte{jsonValue, textValue, binValue}, [][]byte{vals[0].Value, vals[1].Value, vals[2].Value})

		require.Len(t, rows(t, ok(t, e.with("values", mailQueue, valuesKey, "-limit", "1")...)), 1)
		// A key as the tables quote it is an argument as it is shown.
		rs = rows(t, ok(t, e.with("values", mailQueue, `"tab\tkey"`)...))
		require.Len(t, rs, 1)
		assert.Equal(t, "x", rs[0][3])
		require.Equal(t, "[]\n", ok(t, e.with("values", mailQueue, "no-such-key", "-json")...))
	})
}

func TestDead(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		id1, id2 := seed(t, e)
		out := ok(t, e.with("dead", mailQueue)...)
		rs := rows(t, out)
		require.Len(t, rs, 2, out)
		// ID DROPPED KEY ATTEMPT VALUES FIRST-VALUE ERROR
		assert.Equal(t, itoa(int(id1)), rs[0][0])
		assert.Regexp(t, stamp, rs[0][1])
		assert.Equal(t, []string{"dead1", "1", "1", `json "dead1"`, "bounced"}, rs[0][2:])
		// An error over two lines shows quoted, on one.
		assert.Equal(t, []string{"dead2", "1", "1", `json "dead2"`, `"bounced\ntwice"`}, rs[1][2:])

		want, err := e.st.(store.DeadLetters).DeadLetters(context.Background(), mailQueue, 0, 100)
		require.NoError(t, err)
		require.JSONEq(t, jsonOf(t, want), ok(t, e.with("dead", mailQueue, "-json")...))
		rs = rows(t, ok(t, e.with("dead", mailQueue, "-after", itoa(int(id1)))...))
		require.Len(t, rs, 1)
		assert.Equal(t, itoa(int(id2)), rs[0][0])
		require.Len(t, rows(t, ok(t, e.with("dead", mailQueue, "-limit", "1")...)), 1)
	})
}
