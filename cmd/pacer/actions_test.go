package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// nothingChanged requires that pacer ran args, found nothing to do, said
// so on stderr and exited 1.
func nothingChanged(t *testing.T, args ...string) outcome {
	t.Helper()
	o := runBin(t, args...)
	require.Equal(t, 1, o.code, "pacer %q: %+v", args, o)
	require.True(t, strings.HasSuffix(o.stderr, "; nothing changed\n"), o.stderr)
	return o
}

func TestRelease(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		seed(t, e)
		require.Equal(t, "released key held of queue mail\n", ok(t, e.with("release", mailQueue, heldKey)...))
		info, found, err := e.st.(store.Inspector).Key(t.Context(), mailQueue, heldKey)
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, store.Ready, info.State)

		o := nothingChanged(t, e.with("release", mailQueue, heldKey)...)
		require.Equal(t, "pacer: key held of queue mail was not held; nothing changed\n", o.stderr)
		require.Empty(t, o.stdout)
		o = nothingChanged(t, e.with("release", mailQueue, heldKey, "-json")...)
		require.JSONEq(t, `{"action":"release","queue":"mail","key":"held","changed":false}`, o.stdout)
	})
}

func TestRedriveAndPurge(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		id1, id2 := seed(t, e)
		dl := e.st.(store.DeadLetters)

		// The dead letters are recent: an age of an hour removes none,
		// which is not a failure.
		var r result
		require.NoError(t, json.Unmarshal([]byte(ok(t, e.with("purge", mailQueue, "-before", "1h", "-json")...)), &r))
		require.Equal(t, 0, *r.Removed)
		require.False(t, r.Changed)
		require.Contains(t, ok(t, e.with("purge", mailQueue, "-before", "1h")...), "removed 0 dead letters of queue mail dropped before ")

		out := ok(t, e.with("redrive", mailQueue, itoa(int(id1)), "-json")...)
		require.JSONEq(t, `{"action":"redrive","queue":"mail","id":`+itoa(int(id1))+`,"changed":true}`, out)
		vals, err := e.st.(store.Inspector).Values(t.Context(), mailQueue, "dead1", 10)
		require.NoError(t, err)
		require.Len(t, vals, 1, "the dead letter's value is back on its key")
		o := nothingChanged(t, e.with("redrive", mailQueue, itoa(int(id1)))...)
		require.Equal(t, "pacer: queue mail has no dead letter "+itoa(int(id1))+"; nothing changed\n", o.stderr)

		// An instant in RFC 3339 to come removes the other one.
		out = ok(t, e.with("purge", mailQueue, "-before", "2999-01-01T00:00:00Z")...)
		require.Equal(t, "removed 1 dead letters of queue mail dropped before 2999-01-01T00:00:00Z\n", out)
		ds, err := dl.DeadLetters(t.Context(), mailQueue, 0, 10)
		require.NoError(t, err)
		require.Empty(t, ds, "dead letter %d purged", id2)
	})
}

// TestOperate pauses and resumes a queue and a key, retries a key now
// and drops one, as every process that shares the store sees it.
func TestOperate(t *testing.T) {
	onEngines(t, func(t *testing.T, e engine) {
		seed(t, e)
		require.Implements(t, (*store.Operator)(nil), e.st)
		in := e.st.(store.Inspector)
		stats := func() store.Stats {
			s, err := e.st.Stats(t.Context(), mailQueue)
			require.NoError(t, err)
			return s
		}
		key := func(k string) store.KeyInfo {
			info, _, err := in.Key(t.Context(), mailQueue, k)
			require.NoError(t, err)
			return info
		}

		require.Equal(t, "paused queue mail\n", ok(t, e.with("pause", mailQueue)...))
		require.True(t, stats().Paused)
		rs := rows(t, ok(t, e.with("queues")...))
		require.Equal(t, "paused", rs[0][1])
		nothingChanged(t, e.with("pause", mailQueue)...)
		ls, _, err := e.st.Claim(t.Context(), mailQueue, store.ClaimParams{Keys: 10, TTL: time.Hour})
		require.NoError(t, err)
		require.Empty(t, ls, "a paused queue leases nothing")
		require.Equal(t, "resumed queue mail\n", ok(t, e.with("resume", mailQueue)...))
		require.False(t, stats().Paused)
		o := nothingChanged(t, e.with("resume", mailQueue, "-json")...)
		require.JSONEq(t, `{"action":"resume","queue":"mail","changed":false}`, o.stdout)

		require.Equal(t, "paused key values of queue mail\n", ok(t, e.with("pause", mailQueue, valuesKey)...))
		require.True(t, key(valuesKey).Paused)
		rs = rows(t, ok(t, e.with("keys", mailQueue, "-prefix", valuesKey)...))
		require.Equal(t, "ready (paused)", rs[0][1])
		nothingChanged(t, e.with("pause", mailQueue, valuesKey)...)
		require.Equal(t, "resumed key values of queue mail\n", ok(t, e.with("resume", mailQueue, valuesKey)...))
		require.False(t, key(valuesKey).Paused)
		nothingChanged(t, e.with("resume", mailQueue, valuesKey)...)

		require.Equal(t, "key retrying of queue mail is ready now\n", ok(t, e.with("retry", mailQueue, retryKey)...))
		require.Equal(t, store.Ready, key(retryKey).State)
		o = nothingChanged(t, e.with("retry", mailQueue, retryKey)...)
		require.Equal(t, "pacer: key retrying of queue mail was neither retrying nor deferred; nothing changed\n", o.stderr)

		out := ok(t, e.with("drop", mailQueue, valuesKey, "-reason", "spam", "-json")...)
		require.JSONEq(t, `{"action":"drop","queue":"mail","key":"values","changed":true,"moved":3}`, out)
		ds, err := e.st.(store.DeadLetters).DeadLetters(t.Context(), mailQueue, 0, 10)
		require.NoError(t, err)
		last := ds[len(ds)-1]
		require.Equal(t, valuesKey, last.Key)
		require.Equal(t, "spam", last.Err)
		require.Equal(t, [][]byte{jsonValue, textValue, binValue}, last.Values)
		o = nothingChanged(t, e.with("drop", mailQueue, valuesKey)...)
		require.Equal(t, "pacer: key values of queue mail holds no values; nothing changed\n", o.stderr)
		require.Equal(t, "moved 1 values of key \"tab\\tkey\" of queue mail to a dead letter\n", ok(t, e.with("drop", mailQueue, `"tab\tkey"`)...))
	})
}

// TestUnsupported runs the commands on a store that implements none of
// the optional interfaces: each says what the store does not support.
func TestUnsupported(t *testing.T) {
	c := &call{name: "pause", st: struct{ store.Store }{}}
	_, err := c.operator()
	require.EqualError(t, err, "this store does not support pause")
	require.Equal(t, 1, errExit(err))
	c.name = "keys"
	_, err = c.inspector()
	require.EqualError(t, err, "this store does not support keys")
	_, err = c.deadLetters()
	require.EqualError(t, err, "this store does not support dead letters")
}
