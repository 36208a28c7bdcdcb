package pgstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// serverNow returns the server's clock, which the store's times are on.
func serverNow(t *testing.T, pool *pgxpool.Pool) time.Time {
	t.Helper()
	var now time.Time
	require.NoError(t, pool.QueryRow(t.Context(), "SELECT statement_timestamp()").Scan(&now))
	return now
}

// between fails t unless from <= at <= to.
func between(t *testing.T, at, from, to time.Time, what string) {
	t.Helper()
	require.False(t, at.Before(from) || at.After(to), "%s: %v not in [%v, %v]", what, at, from, to)
}

// TestInspectKeyStates: Key tells each state of a key, with since when,
// until when, the attempt, the fence, the holder and the error, as the
// statements that made it left them; Ack and Release forget the error,
// Defer keeps it.
func TestInspectKeyStates(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	key := func(k string) store.KeyInfo {
		t.Helper()
		info, ok, err := s.Key(ctx, "q", k)
		require.NoError(t, err)
		require.True(t, ok, "key %q", k)
		require.Equal(t, k, info.Key)
		return info
	}
	claim := func(holder string) store.Lease {
		t.Helper()
		ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: time.Hour, Holder: holder})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		return ls[0]
	}
	finish := func(l store.Lease, o store.Outcome) {
		t.Helper()
		_, err := s.Finish(ctx, l, o)
		require.NoError(t, err)
	}

	_, ok, err := s.Key(ctx, "q", "none")
	require.NoError(t, err)
	require.False(t, ok)

	t0 := serverNow(t, pool)
	require.NoError(t, s.Add(ctx, "q", "quiet", vals("1", "2"), store.AddParams{Wait: time.Hour}))
	require.NoError(t, s.Add(ctx, "q", "capped", vals("1"), store.AddParams{Wait: time.Hour, MaxWait: time.Minute}))
	require.NoError(t, s.Add(ctx, "q", "capped", vals("2"), store.AddParams{Wait: time.Hour, MaxWait: time.Minute}))
	t1 := serverNow(t, pool)
	quiet := key("quiet")
	require.Equal(t, store.Debouncing, quiet.State)
	require.False(t, quiet.MaxWait)
	between(t, quiet.Until, t0.Add(time.Hour), t1.Add(time.Hour), "quiet's deadline")
	require.Equal(t, 2, quiet.Values)
	between(t, quiet.Oldest, t0, t1, "quiet's oldest")
	require.Zero(t, quiet.Attempt)
	require.True(t, quiet.Since.IsZero())
	capped := key("capped")
	require.Equal(t, store.Debouncing, capped.State)
	require.True(t, capped.MaxWait)
	require.True(t, capped.Until.Equal(capped.Oldest.Add(time.Minute)), "capped at its first value's time and MaxWait")

	require.NoError(t, s.Add(ctx, "q", "k", vals("a"), store.AddParams{}))
	require.NoError(t, s.Add(ctx, "q", "k", vals("b"), store.AddParams{}))
	t2 := serverNow(t, pool)
	k := key("k")
	require.Equal(t, store.Ready, k.State)
	between(t, k.Since, t1, t2, "ready since")
	require.True(t, k.Oldest.Equal(k.Since), "the first value made it ready")
	require.True(t, k.Until.IsZero())
	require.Equal(t, 2, k.Values)
	require.Zero(t, k.Attempt)
	require.Zero(t, k.Fence)

	l := claim("instance-1")
	require.Equal(t, "k", l.Key)
	k = key("k")
	require.Equal(t, store.Leased, k.State)
	require.Equal(t, "instance-1", k.Holder)
	require.Equal(t, l.Fence, k.Fence)
	require.Equal(t, 1, k.Attempt)
	require.Equal(t, time.Hour, k.Until.Sub(k.Since), "leased for the TTL from the claim")
	between(t, k.Since, t2, serverNow(t, pool), "leased since")

	finish(l, store.Outcome{Kind: store.Retry, After: time.Hour, Err: "boom"})
	k = key("k")
	require.Equal(t, store.Retrying, k.State)
	require.Equal(t, 1, k.Attempt, "the attempt that failed")
	require.Equal(t, "boom", k.Err)
	require.Equal(t, "", k.Holder)
	require.Equal(t, l.Fence, k.Fence)
	require.True(t, k.Since.IsZero())
	between(t, k.Until, k.Oldest.Add(time.Hour), serverNow(t, pool).Add(time.Hour), "retrying until")
	require.Equal(t, 2, k.Values)

	// Each key waits for a delay now; lease k again by making its delay
	// pass, as the server's clock would.
	ready(t, pool, s, "k")
	k = key("k")
	require.Equal(t, store.Ready, k.State)
	require.Equal(t, 1, k.Attempt, "the last failure's")
	require.Equal(t, "boom", k.Err, "kept until the batch is acked, dropped or released")
	l = claim("instance-2")
	require.Equal(t, 2, l.Attempt)
	k = key("k")
	require.Equal(t, store.Leased, k.State)
	require.Equal(t, "instance-2", k.Holder)
	require.Equal(t, 2, k.Attempt)

	finish(l, store.Outcome{Kind: store.Defer, After: store.Never})
	k = key("k")
	require.Equal(t, store.Deferred, k.State)
	require.True(t, k.Until.IsZero(), "deferred for good: no end")
	require.Equal(t, 2, k.Attempt, "a Defer counts no attempt")
	require.Equal(t, "boom", k.Err, "a Defer keeps the last failure's error")

	ready(t, pool, s, "k")
	l = claim("")
	t3 := serverNow(t, pool)
	finish(l, store.Outcome{Kind: store.Hold, Err: "stuck"})
	k = key("k")
	require.Equal(t, store.Held, k.State)
	between(t, k.Since, t3, serverNow(t, pool), "held since")
	require.True(t, k.Until.IsZero())
	require.Equal(t, 2, k.Attempt)
	require.Equal(t, "stuck", k.Err)

	released, err := s.Release(ctx, "q", "k")
	require.NoError(t, err)
	require.True(t, released)
	k = key("k")
	require.Equal(t, store.Ready, k.State)
	require.Equal(t, "", k.Err, "released")
	require.Zero(t, k.Attempt, "its attempts started over")

	l = claim("")
	require.Equal(t, vals("a", "b"), l.Values)
	finish(l, store.Outcome{Kind: store.Retry, After: time.Hour, Err: "again"})
	require.NoError(t, s.Add(ctx, "q", "k", vals("c"), store.AddParams{}))
	ready(t, pool, s, "k")
	l = claim("")
	finish(l, store.Outcome{Kind: store.Ack})
	k = key("k")
	require.Equal(t, store.Ready, k.State)
	require.Equal(t, "", k.Err, "acked")
	require.Equal(t, 1, k.Values)
	head, err := s.Values(ctx, "q", "k", 10)
	require.NoError(t, err)
	require.Len(t, head, 1)
	require.Equal(t, []byte("c"), head[0].Value)
	require.True(t, k.Oldest.Equal(head[0].Added), "the new head's time: %v, %v", k.Oldest, head[0].Added)

	// A lease that lapsed counts as ready, since it lapsed.
	l = claim("x")
	_, err = pool.Exec(ctx, "UPDATE "+schemaOf(t, s)+".keys SET leased_until = leased_until - interval '2 hours', ready_at = ready_at - interval '2 hours' WHERE key = 'k'")
	require.NoError(t, err)
	k = key("k")
	require.Equal(t, store.Ready, k.State)
	require.Equal(t, 1, k.Attempt, "the lapsed lease's")
	require.Equal(t, "", k.Holder)
	require.True(t, k.Since.Before(serverNow(t, pool).Add(-time.Hour+time.Second)))
	_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
	require.ErrorIs(t, err, store.ErrLeaseLost)
}

// ready makes key of queue q ready at once, as its delay's end would.
func ready(t *testing.T, pool *pgxpool.Pool, s *pgstore.Store, key string) {
	t.Helper()
	tag, err := pool.Exec(t.Context(), "UPDATE "+schemaOf(t, s)+".keys SET ready_at = statement_timestamp() WHERE queue = 'q' AND key = $1", []byte(key))
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
}

// schemaOf returns s's schema, quoted.
func schemaOf(t *testing.T, s *pgstore.Store) string {
	t.Helper()
	return pgstore.SchemaOf(s)
}

// TestInspectHolderOfSharedClaims: the keys that a flight of Acks claims
// carry the holder of the FinishAndClaim that asked for them, and the
// flights of different holders are different flights.
func TestInspectHolderOfSharedClaims(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, connect(t, appName(t)))
	for i := range 8 {
		require.NoError(t, s.Add(ctx, "q", fmt.Sprint("k", i), vals("v"), store.AddParams{}))
	}
	p := func(holder string) store.ClaimParams {
		return store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Hour, Holder: holder}
	}
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 2, TTL: time.Hour, Holder: "first"})
	require.NoError(t, err)
	require.Len(t, ls, 2)
	type result struct {
		leases []store.Lease
		err    error
	}
	results := make(chan result, 2)
	for i, holder := range []string{"a", "b"} {
		go func() {
			_, leases, _, err := s.FinishAndClaim(ctx, ls[i], store.Outcome{Kind: store.Ack}, p(holder))
			results <- result{leases, err}
		}()
	}
	holders := map[string]string{}
	for range 2 {
		r := <-results
		require.NoError(t, r.err)
		require.Len(t, r.leases, 1)
		info, ok, err := s.Key(ctx, "q", r.leases[0].Key)
		require.NoError(t, err)
		require.True(t, ok)
		holders[info.Holder] = r.leases[0].Key
	}
	require.Len(t, holders, 2)
	require.Contains(t, holders, "a")
	require.Contains(t, holders, "b")
}

// TestInspectValues: Values returns the first values of a key in the order
// they will be leased, each with when it was added, a held batch first.
func TestInspectValues(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	none, err := s.Values(ctx, "q", "k", 10)
	require.NoError(t, err)
	require.Empty(t, none)
	t0 := serverNow(t, pool)
	require.NoError(t, s.Add(ctx, "q", "k", vals("1", "2"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Hour})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.NoError(t, s.Add(ctx, "q", "k", vals("3"), store.AddParams{Wait: time.Hour}))
	_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Hold})
	require.NoError(t, err)
	t1 := serverNow(t, pool)

	got, err := s.Values(ctx, "q", "k", 10)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, want := range []string{"1", "2", "3"} {
		require.Equal(t, want, string(got[i].Value))
		between(t, got[i].Added, t0, t1, "added")
	}
	require.True(t, got[0].Added.Equal(got[1].Added), "added by one Add")
	require.True(t, got[2].Added.After(got[1].Added))
	two, err := s.Values(ctx, "q", "k", 2)
	require.NoError(t, err)
	require.Equal(t, got[:2], two)
	zero, err := s.Values(ctx, "q", "k", 0)
	require.NoError(t, err)
	require.Empty(t, zero)
}

// TestInspectKeysPaging: paging a queue's keys shows each key once, in
// the order of their SHA-256, and a prefix shows the keys that start with
// it, whether it is short, ends in 0xff bytes, or is longer than 64
// bytes.
func TestInspectKeysPaging(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, connect(t, appName(t)))
	long := strings.Repeat("L", 70)
	var keys []string
	for i := range 120 {
		keys = append(keys, fmt.Sprintf("a/%03d", i), fmt.Sprintf("b/%03d", i))
	}
	keys = append(keys, "", "a", "\xff", "\xff\xff", "\xff\xffx", "\xfe\xff", long+"1", long+"2", long+"22", long)
	for _, k := range keys {
		require.NoError(t, s.Add(ctx, "q", k, vals("v"), store.AddParams{}))
	}
	require.NoError(t, s.Add(ctx, "other", "a/000", vals("v"), store.AddParams{}))

	all := pageAll(t, s, store.KeyQuery{Limit: 50})
	require.Len(t, all, len(keys))
	for i := 1; i < len(all); i++ {
		a, b := sha256.Sum256([]byte(all[i-1])), sha256.Sum256([]byte(all[i]))
		require.Negative(t, bytes.Compare(a[:], b[:]), "order at %d: %q, %q", i, all[i-1], all[i])
	}
	require.ElementsMatch(t, keys, all)

	for _, prefix := range []string{"a", "a/", "a/1", "b/119", "\xff", "\xff\xff", "\xfe", long, long + "2", "zzz"} {
		var want []string
		for _, k := range keys {
			if strings.HasPrefix(k, prefix) {
				want = append(want, k)
			}
		}
		got := pageAll(t, s, store.KeyQuery{Prefix: prefix, Limit: 7})
		require.ElementsMatch(t, want, got, "prefix %q", prefix)
	}

	page, err := s.Keys(ctx, "q", store.KeyQuery{})
	require.NoError(t, err)
	require.Len(t, page.Keys, 100, "the default limit")
	page, err = s.Keys(ctx, "q", store.KeyQuery{Limit: 5000})
	require.NoError(t, err)
	require.Len(t, page.Keys, len(keys), "every key, under the largest limit")
	require.Empty(t, page.Next)
	_, err = s.Keys(ctx, "q", store.KeyQuery{Cursor: "not a cursor"})
	require.Error(t, err)
	_, err = s.Keys(ctx, "q", store.KeyQuery{State: 99})
	require.Error(t, err)
	empty, err := s.Keys(ctx, "none", store.KeyQuery{})
	require.NoError(t, err)
	require.Empty(t, empty.Keys)
	require.Empty(t, empty.Next)
}

// pageAll pages through queue q of s with q, and returns the keys shown,
// failing if a key is shown twice.
func pageAll(t *testing.T, s *pgstore.Store, q store.KeyQuery) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10_000, "paging does not end")
		page, err := s.Keys(t.Context(), "q", q)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Keys), max(q.Limit, 1))
		for _, k := range page.Keys {
			require.False(t, seen[k.Key], "key %q shown twice", k.Key)
			seen[k.Key] = true
			out = append(out, k.Key)
			if q.State != 0 {
				require.Equal(t, q.State, k.State, "key %q", k.Key)
			}
		}
		if page.Next == "" {
			return out
		}
		q.Cursor = page.Next
	}
}

// TestInspectKeysByState: a state filter shows the keys in that state,
// each once, the held and retrying ones from indexes of their own, in
// full pages although they are 1 in 1000 keys; a filter that few of many
// keys pass, a prefix included, reads a bounded number of keys per page,
// and gives short pages until the end.
func TestInspectKeysByState(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	backlog(t, pool, schema, "q", 12_000, 1)
	// The first keys to claim: 12 keys, 1 in 1000, to hold, then 12 to
	// retry, so that 2,000 keys read in the order of their hashes hold
	// fewer than 10 of either.
	for _, spread := range []struct{ suffix, before string }{{"000", "1 day"}, {"500", "12 hours"}} {
		_, err = pool.Exec(ctx, "UPDATE "+pgstore.SchemaOf(s)+".keys SET ready_at = ready_at - $2::interval WHERE key LIKE $1",
			"%"+spread.suffix, spread.before)
		require.NoError(t, err)
	}
	claim := func(n int) []store.Lease {
		t.Helper()
		ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: n, TTL: time.Hour, Holder: "h"})
		require.NoError(t, err)
		require.Len(t, ls, n)
		return ls
	}
	byState := map[store.KeyState][]string{}
	for _, l := range claim(12) {
		require.True(t, strings.HasSuffix(l.Key, "000"), l.Key)
		_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Hold})
		require.NoError(t, err)
		byState[store.Held] = append(byState[store.Held], l.Key)
	}
	for _, l := range claim(12) {
		require.True(t, strings.HasSuffix(l.Key, "500"), l.Key)
		_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Retry, After: time.Hour})
		require.NoError(t, err)
		byState[store.Retrying] = append(byState[store.Retrying], l.Key)
	}
	for _, l := range claim(3) {
		_, err := s.Finish(ctx, l, store.Outcome{Kind: store.Defer, After: time.Hour})
		require.NoError(t, err)
		byState[store.Deferred] = append(byState[store.Deferred], l.Key)
	}
	for _, l := range claim(2) {
		byState[store.Leased] = append(byState[store.Leased], l.Key)
	}
	require.NoError(t, s.Add(ctx, "q", "debouncing", vals("v"), store.AddParams{Wait: time.Hour}))
	byState[store.Debouncing] = []string{"debouncing"}

	for _, state := range []store.KeyState{store.Held, store.Retrying} {
		page, err := s.Keys(ctx, "q", store.KeyQuery{State: state, Limit: 10})
		require.NoError(t, err)
		require.Len(t, page.Keys, 10, "a full page of %v keys", state)
		require.ElementsMatch(t, byState[state], pageAll(t, s, store.KeyQuery{State: state, Limit: 10}), "%v", state)
	}
	var prefixed []string // the keys from key-0000100 to key-0000199
	for i := 100; i < 200; i++ {
		prefixed = append(prefixed, fmt.Sprintf("key-%07d", i))
	}
	for _, q := range []store.KeyQuery{{State: store.Leased}, {State: store.Deferred}, {State: store.Debouncing}, {Prefix: "key-00001"}} {
		want := byState[q.State]
		if q.Prefix != "" {
			want = prefixed
		}
		q.Limit = 10
		pages := 0
		var got []string
		for {
			page, err := s.Keys(ctx, "q", q)
			require.NoError(t, err)
			pages++
			for _, k := range page.Keys {
				got = append(got, k.Key)
			}
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
		require.ElementsMatch(t, want, got, "%+v", q)
		require.GreaterOrEqual(t, pages, (12_001+1999)/2000, "%+v: a page reads at most 2,000 keys", q)
	}
	sort.Strings(byState[store.Held])
	// A prefix and a state at once.
	got := pageAll(t, s, store.KeyQuery{State: store.Held, Prefix: byState[store.Held][0], Limit: 10})
	require.Equal(t, byState[store.Held][:1], got)
}

// TestInspectQueues: Queues lists the queues with values or dead letters,
// by name, with their counts, and when the oldest value of their ready
// keys was added.
func TestInspectQueues(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	qs, err := s.Queues(ctx)
	require.NoError(t, err)
	require.Empty(t, qs)

	t0 := serverNow(t, pool)
	require.NoError(t, s.Add(ctx, "b", "k1", vals("1", "2"), store.AddParams{}))
	t1 := serverNow(t, pool)
	require.NoError(t, s.Add(ctx, "b", "k2", vals("3"), store.AddParams{}))
	require.NoError(t, s.Add(ctx, "b", "k3", vals("4"), store.AddParams{Wait: time.Hour}))
	require.NoError(t, s.Add(ctx, "a", "k", vals("1"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "a", store.ClaimParams{Keys: 1, TTL: time.Hour})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Drop, Err: "x"})
	require.NoError(t, err)
	require.NoError(t, s.Add(ctx, "c", "k", vals("1"), store.AddParams{Wait: time.Hour}))
	require.NoError(t, s.Add(ctx, "gone", "k", vals("1"), store.AddParams{}))
	ls, _, err = s.Claim(ctx, "gone", store.ClaimParams{Keys: 1, TTL: time.Hour})
	require.NoError(t, err)
	_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)

	qs, err = s.Queues(ctx)
	require.NoError(t, err)
	require.Len(t, qs, 3)
	require.Equal(t, []string{"a", "b", "c"}, []string{qs[0].Name, qs[1].Name, qs[2].Name})
	require.Equal(t, store.Stats{Dead: 1}, qs[0].Stats)
	require.True(t, qs[0].Oldest.IsZero(), "no ready key")
	require.Equal(t, store.Stats{Values: 4, Keys: 3, Ready: 2, Pending: 1}, qs[1].Stats)
	between(t, qs[1].Oldest, t0, t1, "b's oldest")
	require.Equal(t, store.Stats{Values: 1, Keys: 1, Pending: 1}, qs[2].Stats)
	require.True(t, qs[2].Oldest.IsZero(), "no ready key")
	for _, q := range qs {
		st, err := s.Stats(ctx, q.Name)
		require.NoError(t, err)
		require.Equal(t, st, q.Stats, q.Name)
	}
}

// TestInspectClosed: a closed Store's inspection returns store.ErrClosed.
func TestInspectClosed(t *testing.T) {
	t.Parallel()
	s, err := pgstore.New(context.Background(), connect(t, appName(t)), pgstore.Config{Schema: freshSchema(t, connect(t, appName(t)))})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = s.Queues(t.Context())
	require.ErrorIs(t, err, store.ErrClosed)
	_, err = s.Keys(t.Context(), "q", store.KeyQuery{})
	require.ErrorIs(t, err, store.ErrClosed)
	_, _, err = s.Key(t.Context(), "q", "k")
	require.ErrorIs(t, err, store.ErrClosed)
	_, err = s.Values(t.Context(), "q", "k", 1)
	require.ErrorIs(t, err, store.ErrClosed)
}

// TestAddToReadyKeyIsHOT: an Add to a key that is ready already changes
// no indexed column of its row, the inspection indexes' included, so
// PostgreSQL updates the row in place of its page (a HOT update) and
// makes no index entry. The server counts HOT updates in its statistics,
// which a session sends when it goes idle.
func TestAddToReadyKeyIsHOT(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	connect(t, appName(t)) // skips without a server
	cfg, err := pgxpool.ParseConfig(serverURL())
	require.NoError(t, err)
	cfg.MaxConns = 1 // one session, whose statistics it flushes
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	const adds = 20
	for range adds + 1 {
		require.NoError(t, s.Add(ctx, "q", "k", vals("v"), store.AddParams{}))
	}
	_, err = pool.Exec(ctx, "SELECT pg_stat_force_next_flush()")
	require.NoError(t, err)
	other := connect(t, appName(t))
	var updates, hot int64
	for range 100 {
		require.NoError(t, other.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
			WHERE schemaname = $1 AND relname = 'keys'`, schema).Scan(&updates, &hot))
		if updates >= adds {
			break
		}
		time.Sleep(50 * time.Millisecond) // the server's statistics, not a clock of ours
	}
	require.EqualValues(t, adds, updates, "the Adds to the key's row")
	require.EqualValues(t, adds, hot, "HOT updates of the key's row")
}
