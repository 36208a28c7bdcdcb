package pgstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
)

// oneConnStore returns a Store whose pool has one connection, and a
// counter of the shared Ack statements it runs.
func oneConnStore(t *testing.T) (*pgstore.Store, *pgxpool.Pool, *statementCounter) {
	t.Helper()
	connect(t, appName(t)) // skips without a server
	cfg, err := pgxpool.ParseConfig(serverURL())
	require.NoError(t, err)
	cfg.MaxConns = 1
	shared := &statementCounter{contains: "unnest($2::bytea[], $3::bigint[]"}
	cfg.ConnConfig.Tracer = shared
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close) // after the schema's cleanup
	s, err := pgstore.New(t.Context(), pool, pgstore.Config{Schema: freshSchema(t, pool)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, pool, shared
}

// holdFlights takes the pool's one connection, so that the first flight
// waits for it with the Acks it took, while the Acks that come later wait
// for the next flight, and returns the function that gives it back once
// want Acks of queue are in the first flight or wait.
func holdFlights(t *testing.T, s *pgstore.Store, pool *pgxpool.Pool, queue string) (release func(want int)) {
	t.Helper()
	conn, err := pool.Acquire(t.Context())
	require.NoError(t, err)
	return func(want int) {
		t.Helper()
		require.Eventually(t, func() bool {
			waiting, flying := pgstore.AcksWaiting(s, queue)
			return waiting+flying == want
		}, 5*time.Second, time.Millisecond)
		conn.Release()
	}
}

// Acks that come while a flight flies share the next one: one statement
// and one commit for all of them, each with its own result. A lease that
// does not hold, or comes twice, gets ErrLeaseLost and changes nothing;
// the claims hand out distinct keys, as many as asked, behind the keys
// already waiting. (TestFinishWaitsForAddTx covers an Ack of a key whose
// row an open transaction holds.)
func TestAcksShareAFlight(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, pool, shared := oneConnStore(t)
	p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl}
	for _, k := range []string{"a", "b", "c", "stale"} {
		require.NoError(t, s.Add(ctx, "q", k, vals(k+"1", k+"2"), store.AddParams{}))
	}
	require.NoError(t, s.Add(ctx, "q", "last", vals("last1"), store.AddParams{}))
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 5, MaxBatch: 1, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 5)
	lease := map[string]store.Lease{}
	for _, l := range ls {
		lease[l.Key] = l
	}
	for range 3 { // waiting behind the finished keys' next values
		require.NoError(t, s.Add(ctx, "q", fmt.Sprint("w", len(lease)), vals("w"), store.AddParams{}))
		lease[fmt.Sprint("w", len(lease))] = store.Lease{}
	}
	stale := lease["stale"]
	stale.Fence--

	type result struct {
		name   string
		more   bool
		leases []store.Lease
		err    error
	}
	calls := []struct {
		name string
		l    store.Lease
	}{{"a", lease["a"]}, {"b", lease["b"]}, {"b again", lease["b"]}, {"c", lease["c"]},
		{"stale", stale}, {"last", lease["last"]}}
	release := holdFlights(t, s, pool, "q")
	results := make(chan result, len(calls))
	for _, c := range calls {
		go func() {
			more, ls, _, err := s.FinishAndClaim(ctx, c.l, store.Outcome{Kind: store.Ack}, p)
			results <- result{c.name, more, ls, err}
		}()
	}
	release(len(calls))
	got := map[string]result{}
	for range calls {
		r := <-results
		got[r.name] = r
	}
	// The first flight, one for the Acks that came while it flew, and one
	// for those that a flight did not end (stale, b again), which board
	// one more before they go alone; when b and b again come in one
	// flight, b again is left out of it as a duplicate, and its own try
	// may take one flight more. The order in which the six arrive decides.
	require.LessOrEqual(t, shared.n.Load(), int64(4), "flights for %d Acks", len(calls))

	require.ErrorIs(t, got["stale"].err, store.ErrLeaseLost)
	require.Empty(t, got["stale"].leases)
	b, bAgain := got["b"], got["b again"]
	if b.err != nil { // either of the two may come first
		b, bAgain = bAgain, b
	}
	require.ErrorIs(t, bAgain.err, store.ErrLeaseLost)
	require.Empty(t, bAgain.leases)
	claimed := map[string]bool{}
	for _, name := range []string{"a", "c", "last"} {
		require.NoError(t, got[name].err, name)
		require.Len(t, got[name].leases, 1, name)
	}
	require.NoError(t, b.err)
	require.Len(t, b.leases, 1)
	for _, r := range []result{b, got["a"], got["c"], got["last"]} {
		k := r.leases[0].Key
		require.False(t, claimed[k], "key %s leased twice", k)
		claimed[k] = true
	}
	require.True(t, got["a"].more)
	require.True(t, b.more)
	require.False(t, got["last"].more)
	// Whichever Ack flew first, its claim took a key that waited before
	// any flight, and the second flight's claim the others first.
	waited := 0
	for k := range claimed {
		if strings.HasPrefix(k, "w") {
			waited++
		}
	}
	require.Equal(t, 3, waited, "the keys waiting before the flights: w5, w6 and w7")

	// The stale lease changed nothing: the key is still leased by its
	// holder, who acks its first value.
	more, err := s.Finish(ctx, lease["stale"], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.True(t, more)
}

// An Ack whose ctx ends while it waits for a flight leaves it, returns
// ctx.Err() and changes nothing.
func TestAckLeavesItsFlight(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s, pool, _ := oneConnStore(t)
	for _, k := range []string{"a", "b"} {
		require.NoError(t, s.Add(ctx, "q", k, vals("1"), store.AddParams{}))
	}
	ls, _, err := s.Claim(ctx, "q", store.ClaimParams{Keys: 2, TTL: ttl})
	require.NoError(t, err)
	require.Len(t, ls, 2)
	release := holdFlights(t, s, pool, "q")
	first := make(chan error, 1)
	go func() {
		_, err := s.Finish(ctx, ls[0], store.Outcome{Kind: store.Ack})
		first <- err
	}()
	require.Eventually(t, func() bool {
		_, flying := pgstore.AcksWaiting(s, "q")
		return flying == 1
	}, 5*time.Second, time.Millisecond)
	short, cancel := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() {
		_, err := s.Finish(short, ls[1], store.Outcome{Kind: store.Ack})
		left <- err
	}()
	require.Eventually(t, func() bool {
		waiting, _ := pgstore.AcksWaiting(s, "q")
		return waiting == 1
	}, 5*time.Second, time.Millisecond)
	cancel()
	require.ErrorIs(t, <-left, context.Canceled)
	release(1)
	require.NoError(t, <-first)
	st, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{Values: 1, Keys: 1, Leased: 1}, st, "b is still leased")
	more, err := s.Finish(ctx, ls[1], store.Outcome{Kind: store.Ack})
	require.NoError(t, err)
	require.False(t, more)
}

// Workers that ack and claim at once, many flights of them, lease every
// value once, in each key's order.
func TestSharedAcksHammer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, connect(t, appName(t)))
	const keys, per, workers = 50, 6, 8
	for i := range per {
		for k := range keys {
			require.NoError(t, s.Add(ctx, "q", fmt.Sprint("k", k), vals(fmt.Sprint(i)), store.AddParams{}))
		}
	}
	p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: ttl}
	var (
		mu   sync.Mutex
		seen = map[string][]string{}
		left atomic.Int64
	)
	left.Store(keys * per)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var ls []store.Lease
			for left.Load() > 0 {
				if len(ls) == 0 {
					var err error
					if ls, _, err = s.Claim(ctx, "q", p); err != nil {
						t.Error(err)
						return
					}
					if len(ls) == 0 {
						time.Sleep(time.Millisecond)
						continue
					}
				}
				l := ls[0]
				mu.Lock()
				seen[l.Key] = append(seen[l.Key], string(l.Values[0]))
				mu.Unlock()
				left.Add(-1)
				var err error
				if w%2 == 0 {
					_, ls, _, err = s.FinishAndClaim(ctx, l, store.Outcome{Kind: store.Ack}, p)
				} else {
					_, err = s.Finish(ctx, l, store.Outcome{Kind: store.Ack})
					ls = nil
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	want := make([]string, per)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	for k := range keys {
		require.Equal(t, want, seen[fmt.Sprint("k", k)])
	}
	st, err := s.Stats(ctx, "q")
	require.NoError(t, err)
	require.Equal(t, store.Stats{}, st)
}

// statementCounter is a pgx.QueryTracer and pgx.BatchTracer that counts
// the statements that contain a string, alone or in batches.
type statementCounter struct {
	contains string
	n        atomic.Int64
}

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, c.contains) {
		c.n.Add(1)
	}
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *statementCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	if strings.Contains(d.SQL, c.contains) {
		c.n.Add(1)
	}
}

func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
