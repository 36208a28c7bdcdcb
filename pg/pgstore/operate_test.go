package pgstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// TestOperatePausedQueueAcrossStores: a queue paused through one Store
// leases nothing through another on the same schema, whose Claims say
// Never and whose FinishAndClaims finish (an Ack's shared flight and a
// Retry's transaction alike) without leasing; its Waits sleep while ready
// keys wait, and ResumeQueue, made through the first Store, wakes them.
func TestOperatePausedQueueAcrossStores(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	a := slowPollStore(t, pool, schema)
	b, err := pgstore.New(ctx, connect(t, appName(t)), pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer b.Close()
	p := store.ClaimParams{Keys: 1, TTL: ttl}
	for _, k := range []string{"a", "b", "c", "d"} {
		require.NoError(t, a.Add(ctx, "q", k, vals(k+"1", k+"2"), store.AddParams{}))
	}
	ls, _, err := a.Claim(ctx, "q", store.ClaimParams{Keys: 2, MaxBatch: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 2)

	paused, err := b.PauseQueue(ctx, "q")
	require.NoError(t, err)
	require.True(t, paused)
	paused, err = b.PauseQueue(ctx, "q")
	require.NoError(t, err)
	require.False(t, paused, "a second pause")
	got, next, err := a.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Empty(t, got)
	require.Equal(t, store.Never, next)
	more, got, next, err := a.FinishAndClaim(ctx, ls[0], store.Outcome{Kind: store.Ack}, p)
	require.NoError(t, err)
	require.True(t, more)
	require.Empty(t, got)
	require.Equal(t, store.Never, next)
	more, got, next, err = a.FinishAndClaim(ctx, ls[1], store.Outcome{Kind: store.Retry, After: time.Hour}, p)
	require.NoError(t, err)
	require.True(t, more)
	require.Empty(t, got)
	require.Equal(t, store.Never, next)
	st, err := a.Stats(ctx, "q")
	require.NoError(t, err)
	require.True(t, st.Paused)
	require.Equal(t, 7, st.Values)
	require.Equal(t, 3, st.Ready, "ready keys count as ready while their queue is paused")

	sleeping(t, a, "q")
	takes(t, a, "q", func() {
		resumed, err := b.ResumeQueue(ctx, "q")
		require.NoError(t, err)
		require.True(t, resumed)
	})
	resumed, err := b.ResumeQueue(ctx, "q")
	require.NoError(t, err)
	require.False(t, resumed, "a second resume")
	st, err = a.Stats(ctx, "q")
	require.NoError(t, err)
	require.False(t, st.Paused)
}

// sleeping checks that a Wait of s on queue sleeps, for a moment at least,
// though its d is long: it neither returns at once nor spins.
func sleeping(t *testing.T, s *pgstore.Store, queue string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.Wait(ctx, queue, time.Hour), ctx.Err(), "Wait returned before its ctx ended")
}

// TestOperatePausedKey: a paused key is not leased, though values come to
// it and its lease ends with values left; the keys around it are. Resumed,
// it goes behind the keys ready by then, and the Waits of another Store
// wake for it.
func TestOperatePausedKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	a := slowPollStore(t, pool, schema)
	b, err := pgstore.New(ctx, connect(t, appName(t)), pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer b.Close()
	p := store.ClaimParams{Keys: 10, MaxBatch: 1, TTL: ttl}
	require.NoError(t, a.Add(ctx, "q", "k", vals("k1", "k2"), store.AddParams{}))
	ls, _, err := a.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Len(t, ls, 1)

	paused, err := b.PauseKey(ctx, "q", "k")
	require.NoError(t, err)
	require.True(t, paused)
	paused, err = b.PauseKey(ctx, "q", "k")
	require.NoError(t, err)
	require.False(t, paused, "a second pause")
	more, err := a.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.True(t, more, "the lease out ran on")
	require.NoError(t, a.Add(ctx, "q", "k", vals("k3"), store.AddParams{}))
	require.NoError(t, a.Add(ctx, "q", "other", vals("o1"), store.AddParams{}))
	info, ok, err := a.Key(ctx, "q", "k")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, store.Ready, info.State, "what its values are doing")
	require.True(t, info.Paused)
	require.Zero(t, info.Ahead, "a paused key is not in the ready order")
	st, err := a.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 3, Keys: 2, Ready: 1, PausedKeys: 1}, st)

	ls, next, err := a.Claim(ctx, "q", p)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, "other", ls[0].Key)
	require.Equal(t, ttl, next, "the lease's expiry, not the paused key")
	sleeping(t, a, "q")
	takes(t, a, "q", func() {
		resumed, err := b.ResumeKey(ctx, "q", "k")
		require.NoError(t, err)
		require.True(t, resumed)
	})
	resumed, err := b.ResumeKey(ctx, "q", "k")
	require.NoError(t, err)
	require.False(t, resumed, "a second resume")
	_, ok, err = a.Key(ctx, "q", "k")
	require.NoError(t, err)
	require.False(t, ok, "the worker took k's values")
}

// TestOperateResumedKeyGoesToTheTail: a key that came ready while paused
// is leased, once resumed, after the keys that came ready meanwhile, and
// Key counts them ahead of it.
func TestOperateResumedKeyGoesToTheTail(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, connect(t, appName(t)))
	require.NoError(t, s.Add(ctx, "q", "first", vals("1"), store.AddParams{}))
	_, err := s.PauseKey(ctx, "q", "first")
	require.NoError(t, err)
	for _, k := range []string{"b", "c"} {
		require.NoError(t, s.Add(ctx, "q", k, vals("1"), store.AddParams{}))
	}
	_, err = s.ResumeKey(ctx, "q", "first")
	require.NoError(t, err)
	info, ok, err := s.Key(ctx, "q", "first")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, store.Ready, info.State)
	require.Equal(t, 2, info.Ahead)
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 3, TTL: ttl})
	require.NoError(t, err)
	require.Equal(t, []string{"b", "c", "first"}, keysOf(ls))
}

// TestOperatePausedKeyWithoutValues: a key paused without values, or whose
// values went while it was paused, keeps its pause: Key shows it, empty;
// Stats count it in PausedKeys alone; pages and Queues leave it out; an
// Add to it waits; ResumeKey of a key that still has none forgets it.
func TestOperatePausedKeyWithoutValues(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, connect(t, appName(t)))
	paused, err := s.PauseKey(ctx, "q", "empty")
	require.NoError(t, err)
	require.True(t, paused)
	require.NoError(t, s.Add(ctx, "q", "gone", vals("1"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	_, err = s.PauseKey(ctx, "q", "gone")
	require.NoError(t, err)
	more, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.False(t, more)

	for _, k := range []string{"empty", "gone"} {
		info, ok, err := s.Key(ctx, "q", k)
		require.NoError(t, err)
		require.True(t, ok, k)
		require.Equal(t, store.KeyInfo{Key: k, Paused: true}, info, k)
	}
	st, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{PausedKeys: 2}, st)
	page, err := s.Keys(ctx, "q", store.KeyQuery{})
	require.NoError(t, err)
	require.Empty(t, page.Keys)
	qs, err := s.Queues(ctx)
	require.NoError(t, err)
	require.Empty(t, qs)

	require.NoError(t, s.Add(ctx, "q", "gone", vals("2"), store.AddParams{}))
	ls, next, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Empty(t, ls)
	require.Equal(t, store.Never, next)
	info, _, err := s.Key(ctx, "q", "gone")
	require.NoError(t, err)
	require.Equal(t, store.Ready, info.State)
	require.Zero(t, info.Fence, "no lease since it held no values")
	require.True(t, info.Paused)

	resumed, err := s.ResumeKey(ctx, "q", "empty")
	require.NoError(t, err)
	require.True(t, resumed)
	_, ok, err := s.Key(ctx, "q", "empty")
	require.NoError(t, err)
	require.False(t, ok, "a resumed key without values")
	_, err = s.ResumeKey(ctx, "q", "gone")
	require.NoError(t, err)
	ls, _, err = s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Equal(t, []string{"gone"}, keysOf(ls))
	require.Equal(t, vals("2"), ls[0].Values)
}

// TestOperateDropKey: DropKey moves a leased key's values, its lease's and
// its open burst's, to one dead letter in order, ends the lease, and takes
// them off the queue's count, so that a bound sees the room. A paused key
// stays paused, and a key without values gives no dead letter.
func TestOperateDropKey(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, connect(t, appName(t)))
	require.NoError(t, s.Add(ctx, "q", "k", vals("1", "2"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.NoError(t, s.Add(ctx, "q", "k", vals("3"), store.AddParams{Wait: time.Hour}))
	require.NoError(t, s.Add(ctx, "q", "p", vals("p1"), store.AddParams{Wait: time.Hour}))
	_, err = s.PauseKey(ctx, "q", "p")
	require.NoError(t, err)

	n, err := s.DropKey(ctx, "q", "k", "bad key")
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.ErrorIs(t, s.Extend(ctx, ls[0], ttl), store.ErrLeaseLost)
	_, err = s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
	require.ErrorIs(t, err, store.ErrLeaseLost)
	n, err = s.DropKey(ctx, "q", "p", "paused")
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = s.DropKey(ctx, "q", "p", "again")
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = s.DropKey(ctx, "q", "none", "never there")
	require.NoError(t, err)
	require.Zero(t, n)

	ds, err := s.DeadLetters(ctx, "q", 0, 10)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	require.Equal(t, "k", ds[0].Key)
	require.Equal(t, vals("1", "2", "3"), ds[0].Values)
	require.Equal(t, "bad key", ds[0].Err)
	require.Equal(t, 1, ds[0].Attempt, "the lease's")
	require.Equal(t, vals("p1"), ds[1].Values)
	require.Zero(t, ds[1].Attempt, "never leased")
	st, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{Dead: 2, PausedKeys: 1}, st)
	info, ok, err := s.Key(ctx, "q", "p")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, store.KeyInfo{Key: "p", Paused: true}, info)
	_, ok, err = s.Key(ctx, "q", "k")
	require.NoError(t, err)
	require.False(t, ok)

	// The count: a bound of 2 takes 2 values again.
	require.NoError(t, s.Add(ctx, "q", "k", vals("4", "5"), store.AddParams{MaxValues: 2}))
	require.ErrorIs(t, s.Add(ctx, "q", "k", vals("6"), store.AddParams{MaxValues: 2}), store.ErrFull)
}

// TestOperateDropKeyWaitsForAddTx: an open transaction that added to a
// key holds the key's row; DropKey waits for it, and then moves its values
// too, leaving none of them behind: the key takes values again from its
// first.
func TestOperateDropKeyWaitsForAddTx(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	require.NoError(t, s.Add(ctx, "q", "k", vals("1"), store.AddParams{}))
	tx, err := pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	require.NoError(t, s.AddTx(ctx, tx, "q", "k", vals("2", "3"), store.AddParams{}))
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := s.DropKey(ctx, "q", "k", "x")
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("DropKey did not wait for the transaction: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
	require.NoError(t, tx.Commit(ctx))
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, 3, r.n)
	ds, err := s.DeadLetters(ctx, "q", 0, 10)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, vals("1", "2", "3"), ds[0].Values)
	require.NoError(t, s.Add(ctx, "q", "k", vals("4"), store.AddParams{}))
	st, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 1, Keys: 1, Ready: 1, Dead: 1}, st)
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, vals("4"), ls[0].Values)
}

// TestOperateRetryNow: RetryNow makes a retrying key ready now, behind the
// keys ready already, with its batch and attempt, and wakes the Waits of
// another Store; a key that is not waiting for a delay stays as it is.
func TestOperateRetryNow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	a := slowPollStore(t, pool, schema)
	b, err := pgstore.New(ctx, connect(t, appName(t)), pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, a.Add(ctx, "q", "k", vals("1", "2", "3"), store.AddParams{}))
	ls, _, err := a.Claim(ctx, "q", store.ClaimParams{Keys: 1, MaxBatch: 2, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 1)
	_, err = a.Finish(ctx, ls[0], store.Outcome{Kind: store.Retry, After: time.Hour, Err: "later"})
	require.NoError(t, err)
	retried, err := b.RetryNow(ctx, "q", "ready")
	require.NoError(t, err)
	require.False(t, retried, "a key without values")
	require.NoError(t, a.Add(ctx, "q", "ready", vals("r"), store.AddParams{}))
	retried, err = b.RetryNow(ctx, "q", "ready")
	require.NoError(t, err)
	require.False(t, retried, "a ready key")

	got := make(chan []store.Lease, 1)
	takesFirst := func() {
		ls, _, err := a.Claim(ctx, "q", store.ClaimParams{Keys: 1, MaxBatch: 5, TTL: ttl})
		require.NoError(t, err)
		require.Equal(t, []string{"ready"}, keysOf(ls))
	}
	takesFirst()
	go func() {
		for {
			ls, next, err := a.Claim(ctx, "q", store.ClaimParams{Keys: 1, MaxBatch: 5, TTL: ttl})
			if err != nil || len(ls) > 0 {
				got <- ls
				return
			}
			if a.Wait(ctx, "q", next) != nil {
				got <- nil
				return
			}
		}
	}()
	select {
	case <-got:
		t.Fatal("leased before RetryNow")
	case <-time.After(100 * time.Millisecond):
	}
	retried, err = b.RetryNow(ctx, "q", "k")
	require.NoError(t, err)
	require.True(t, retried)
	select {
	case ls := <-got:
		require.Len(t, ls, 1)
		require.Equal(t, "k", ls[0].Key)
		require.Equal(t, vals("1", "2"), ls[0].Values, "its batch as it was")
		require.Equal(t, 2, ls[0].Attempt)
	case <-time.After(5 * time.Second):
		t.Fatal("the Wait slept through RetryNow")
	}
}

// TestOperateAheadIsBounded: Key counts at most store.MaxAhead keys ahead
// of a ready key, however many are.
func TestOperateAheadIsBounded(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	backlog(t, pool, schema, "q", store.MaxAhead+5, 1)
	for i, want := range map[int]int{0: 0, 7: 7, store.MaxAhead: store.MaxAhead, store.MaxAhead + 4: store.MaxAhead} {
		info, ok, err := s.Key(ctx, "q", fmt.Sprintf("key-%07d", i))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want, info.Ahead, "key %d", i)
	}
	// A paused key ahead does not count.
	_, err = s.PauseKey(ctx, "q", "key-0000003")
	require.NoError(t, err)
	info, _, err := s.Key(ctx, "q", "key-0000007")
	require.NoError(t, err)
	require.Equal(t, 6, info.Ahead)
}

// TestOperatePausedKeysCostClaimsNothing: keys paused while ready are not
// in the index that a Claim reads, so a Claim reads as few pages with
// thousands of them ahead of the ready keys as without.
func TestOperatePausedKeysCostClaimsNothing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	schema := freshSchema(t, pool)
	s, err := pgstore.New(ctx, pool, pgstore.Config{Schema: schema})
	require.NoError(t, err)
	defer s.Close()
	// Paused keys ready before the others, made paused (an update would
	// leave index entries that only a vacuum removes, which the tests
	// running beside this one may keep from removing them).
	q := pgx.Identifier{schema}.Sanitize()
	_, err = pool.Exec(ctx, "INSERT INTO "+q+`.keys (queue, key_hash, key, tail, ready_at, paused)
		SELECT 'q', sha256(k), k, 1, now() - interval '2 hours' + i * interval '1 microsecond', true
		FROM generate_series(1, 5000) AS i, convert_to('paused-' || i, 'UTF8') AS k`)
	require.NoError(t, err)
	backlog(t, pool, schema, "q", 10, 1)
	// The read of Claim's statement, on a plan of its own.
	var plan []struct {
		Plan struct {
			Hit  int `json:"Shared Hit Blocks"`
			Read int `json:"Shared Read Blocks"`
		}
	}
	var out []byte
	require.NoError(t, pool.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT key FROM "+q+`.keys
		WHERE queue = 'q' AND ready_at <= statement_timestamp() AND NOT paused
		ORDER BY ready_at LIMIT 5 FOR UPDATE SKIP LOCKED`).Scan(&out))
	require.NoError(t, json.Unmarshal(out, &plan))
	require.Len(t, plan, 1)
	// A few pages per key locked; the 5,000 paused keys before them would
	// take some 25 pages of an index and 50 of the table.
	require.LessOrEqual(t, plan[0].Plan.Hit+plan[0].Plan.Read, 20, "pages read: %s", out)
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 20, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 10, "the keys not paused")
	require.Equal(t, "key-0000000", ls[0].Key)
}

// keysOf returns the keys of ls, in order.
func keysOf(ls []store.Lease) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Key
	}
	return out
}
