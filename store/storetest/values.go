package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// testLargeAndBinaryValues: values of any size and any bytes come back as
// they were added, through leases, retries and dead letters.
func testLargeAndBinaryValues(f *fixture) {
	big := make([]byte, 1<<20)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(big)
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	vals := [][]byte{big, all, {}, {0}, []byte("\xff\xfe"), []byte(`{"json":"\u0000"}`), []byte("a\r\nb")}
	require.NoError(f.t, f.s.Add(f.ctx, f.q, "k", vals, store.AddParams{}))
	l := f.claimOne(one())
	require.True(f.t, sameBytes(vals, l.Values), "values changed on the way")
	f.finish(l, store.Outcome{Kind: store.Retry})
	l = f.claimOne(one())
	require.True(f.t, sameBytes(vals, l.Values), "values changed on a retry")

	if dl, ok := f.s.(store.DeadLetters); ok {
		f.finish(l, store.Outcome{Kind: store.Drop, Err: "\x00\xff"})
		ds := f.list(dl, f.q, 0, 1)
		require.Len(f.t, ds, 1)
		require.True(f.t, sameBytes(vals, ds[0].Values), "values changed in a dead letter")
		require.Equal(f.t, "\x00\xff", ds[0].Err)
	} else {
		f.ack(l, false)
	}

	many := make([][]byte, 1000)
	for i := range many {
		many[i] = []byte(fmt.Sprint(i))
	}
	require.NoError(f.t, f.s.Add(f.ctx, f.q, "many", many, store.AddParams{}))
	l = f.claimOne(one())
	require.True(f.t, sameBytes(many, l.Values), "a thousand values in one Add")
	f.ack(l, false)
}

// testUnusualKeys: the empty key and keys of unusual bytes are keys like
// any other, and distinct.
func testUnusualKeys(f *fixture) {
	keys := []string{"", " ", "a", "a\x00", "\x00", "{q}", "}{", "k:1", "*", "%s", "ключ", "\xff\xfe", "a\nb", strings.Repeat("k", 1000)}
	for i, k := range keys {
		f.add(k, fmt.Sprint(i))
	}
	ls, next := f.claim(store.ClaimParams{Keys: len(keys) + 1, TTL: ttl})
	require.Equal(f.t, keys, keysOf(ls))
	require.Positive(f.t, next)
	for i, l := range ls {
		f.values(l, keys[i], fmt.Sprint(i))
	}
	f.finish(ls[0], store.Outcome{Kind: store.Hold})
	ok, err := f.s.Release(f.ctx, f.q, "")
	require.NoError(f.t, err)
	require.True(f.t, ok, "the empty key was held")
	for _, l := range ls[1:] {
		f.ack(l, false)
	}
	f.ack(f.claimOne(one()), false)
	require.Zero(f.t, f.stats().Keys)
}

// testLongKeys: keys of 3000 bytes and of 1 MiB, of random bytes, and keys
// that differ from those in their last byte only, are keys like any other,
// and distinct: each comes back whole from a lease, a retry, a hold and its
// release, a debounced Add, a dead letter and its redrive.
func testLongKeys(f *fixture) {
	rnd := rand.NewChaCha8([32]byte{2})
	long := func(n int) string {
		b := make([]byte, n)
		_, _ = rnd.Read(b)
		return string(b)
	}
	lastByte := func(k string) string { return k[:len(k)-1] + string(k[len(k)-1]^1) }
	mid, big := long(3000), long(1<<20)
	keys := []string{mid, lastByte(mid), big, lastByte(big)}
	for i, k := range keys {
		f.add(k, fmt.Sprint(i))
	}
	ls, _ := f.claim(store.ClaimParams{Keys: len(keys) + 1, TTL: ttl})
	require.Len(f.t, ls, len(keys))
	for i, l := range ls {
		f.longKey(l, keys[i], fmt.Sprint(i))
	}
	f.ack(ls[0], false)

	f.finish(ls[1], store.Outcome{Kind: store.Hold})
	ok, err := f.s.Release(f.ctx, f.q, mid)
	require.NoError(f.t, err)
	require.False(f.t, ok, "the key held is the other one")
	ok, err = f.s.Release(f.ctx, f.q, keys[1])
	require.NoError(f.t, err)
	require.True(f.t, ok, "the key was held")
	l := f.claimOne(one())
	f.longKey(l, keys[1], "1")
	f.ack(l, false)

	require.NoError(f.t, f.s.Extend(f.ctx, ls[2], ttl))
	f.finish(ls[2], store.Outcome{Kind: store.Drop, Err: "e"})
	f.finish(ls[3], store.Outcome{Kind: store.Retry})
	l = f.claimOne(one())
	f.longKey(l, keys[3], "3")
	require.Equal(f.t, 2, l.Attempt)
	b := time.Now()
	f.addP(keys[3], store.AddParams{Wait: f.tick, MaxWait: f.tick}, "4")
	f.ack(l, true)
	l = f.await(one(), b.Add(f.tick))
	f.longKey(l, keys[3], "4")
	f.ack(l, false)

	if dl, ok := f.s.(store.DeadLetters); ok {
		ds := f.list(dl, f.q, 0, 10)
		require.Len(f.t, ds, 1)
		require.True(f.t, ds[0].Key == big, "the dead letter's key: %d bytes, want the key of %d", len(ds[0].Key), len(big))
		redriven, err := dl.Redrive(f.ctx, f.q, ds[0].ID)
		require.NoError(f.t, err)
		require.True(f.t, redriven)
		l = f.claimOne(one())
		f.longKey(l, big, "2")
		f.ack(l, false)
	}
	require.Equal(f.t, 0, f.stats().Keys, "every key is done")
}

// longKey checks that l holds key and want, without printing the key.
func (f *fixture) longKey(l store.Lease, key string, want ...string) {
	f.t.Helper()
	require.True(f.t, l.Key == key, "lease of a key of %d bytes, want the one of %d added with %q", len(l.Key), len(key), want)
	require.Equal(f.t, want, strs(l.Values), "values of a key of %d bytes", len(key))
}

// testAddNothing: an Add of no values does nothing.
func testAddNothing(f *fixture) {
	require.NoError(f.t, f.s.Add(f.ctx, f.q, "k", nil, store.AddParams{}))
	require.NoError(f.t, f.s.Add(f.ctx, f.q, "k", [][]byte{}, store.AddParams{Wait: time.Minute}))
	require.Equal(f.t, store.Stats{}, f.stats())
	_, next := f.claim(one())
	require.Equal(f.t, store.Never, next)
}

// testFirst: a lease's First is when its oldest value was added, on the
// engine's clock; a retry keeps it.
func testFirst(f *fixture) {
	b := time.Now()
	f.add("k", "1")
	a := time.Now()
	f.pause(f.tick)
	f.add("k", "2")
	l := f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	require.WithinRange(f.t, l.First, b.Add(-f.late), a.Add(f.late))
	f.finish(l, store.Outcome{Kind: store.Retry})
	l2 := f.claimOne(store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	require.True(f.t, l.First.Equal(l2.First), "a retry keeps First")
	f.ack(l2, true)
	l3 := f.claimOne(one())
	require.GreaterOrEqual(f.t, l3.First.Sub(l.First), f.tick, "First of the value added a tick later")
	f.ack(l3, false)
}

// testDoneContext: every method called with a ctx that ended returns
// ctx.Err() and changes nothing.
func testDoneContext(f *fixture) {
	f.add("k", "1")
	l := f.claimOne(one())
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	require.ErrorIs(f.t, f.s.Add(ctx, f.q, "k", bytesOf([]string{"2"}), store.AddParams{}), context.Canceled)
	require.ErrorIs(f.t, f.s.Add(ctx, f.q, "j", bytesOf([]string{"2"}), store.AddParams{}), context.Canceled)
	_, _, err := f.s.Claim(ctx, f.q, one())
	require.ErrorIs(f.t, err, context.Canceled)
	require.ErrorIs(f.t, f.s.Extend(ctx, l, ttl), context.Canceled)
	_, err = f.s.Finish(ctx, l, store.Outcome{Kind: store.Drop})
	require.ErrorIs(f.t, err, context.Canceled)
	_, err = f.s.Release(ctx, f.q, "k")
	require.ErrorIs(f.t, err, context.Canceled)
	_, err = f.s.Stats(ctx, f.q)
	require.ErrorIs(f.t, err, context.Canceled)
	require.ErrorIs(f.t, f.s.Wait(ctx, f.q, time.Minute), context.Canceled)
	if dl, ok := f.s.(store.DeadLetters); ok {
		_, err = dl.DeadLetters(ctx, f.q, 0, 10)
		require.ErrorIs(f.t, err, context.Canceled)
		_, err = dl.Redrive(ctx, f.q, 1)
		require.ErrorIs(f.t, err, context.Canceled)
		_, err = dl.Purge(ctx, f.q, time.Now().Add(time.Hour))
		require.ErrorIs(f.t, err, context.Canceled)
	}
	require.Equal(f.t, store.Stats{Values: 1, Keys: 1, Leased: 1}, f.stats())
	f.ack(l, false)
}
