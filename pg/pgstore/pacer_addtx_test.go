package pgstore_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// A Runner's AddTx on PostgreSQL: a value added in a transaction that
// commits is handled, one added in a transaction that rolls back never
// exists, and the caller's own rows commit or roll back with it.
func TestRunnerAddTx(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	s := newStore(t, pool)
	events := callerTable(t, pool)
	handled := make(chan int, 10)
	r, err := pacer.New(pacer.Config[string, int]{Store: s, Name: "outbox", MaxBatch: 1},
		func(_ context.Context, _ string, batch []int) error {
			handled <- batch[0]
			return nil
		})
	require.NoError(t, err)
	storetest.StartRunner(t, r)

	publish := func(id int, commit bool) {
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
		_, err = tx.Exec(ctx, "INSERT INTO "+events+" (id) VALUES ($1)", id)
		require.NoError(t, err)
		require.NoError(t, r.AddTx(ctx, tx, "sub", id))
		if commit {
			require.NoError(t, tx.Commit(ctx))
		}
	}
	publish(1, true)
	publish(2, false)
	publish(3, true)
	var got []int
	for len(got) < 2 {
		select {
		case v := <-handled:
			got = append(got, v)
		case <-time.After(5 * time.Second):
			t.Fatalf("handled %v", got)
		}
	}
	// 3 came after 1 in the key's order: a 2 would have come between.
	require.Equal(t, []int{1, 3}, got)
	rows, err := pool.Query(ctx, "SELECT id FROM "+events+" ORDER BY id")
	require.NoError(t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	require.Equal(t, []int{1, 3}, ids)
	require.Eventually(t, func() bool {
		st, err := s.Stats(ctx, "outbox")
		return err == nil && st == store.Stats{}
	}, 5*time.Second, 5*time.Millisecond)

	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return r.AddTx(ctx, pool, "sub", 4) })
	require.EqualError(t, err, "pgstore: AddTx needs a pgx.Tx, got *pgxpool.Pool")
}

// A Runner's AddTx obeys Config.MaxValues: the values of the transactions
// that committed and of the one in progress count, one that rolled back
// leaves its room, and an AddTx refused with ErrFull leaves the caller's
// transaction usable.
func TestRunnerAddTxMaxValues(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := connect(t, appName(t))
	events := callerTable(t, pool)
	r, err := pacer.New(pacer.Config[string, int]{Store: newStore(t, pool), Name: "outbox", MaxValues: 2},
		func(context.Context, string, []int) error { return nil })
	require.NoError(t, err)
	publish := func(commit bool, ids ...int) (errs []error) {
		tx, err := pool.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
		for _, id := range ids {
			errs = append(errs, r.AddTx(ctx, tx, "sub", id))
		}
		_, err = tx.Exec(ctx, "INSERT INTO "+events+" (id) VALUES ($1)", ids[0])
		require.NoError(t, err, "the transaction is usable")
		if commit {
			require.NoError(t, tx.Commit(ctx))
		}
		return errs
	}
	require.Equal(t, []error{nil, nil}, publish(false, 1, 2), "rolled back")
	require.Equal(t, []error{nil}, publish(true, 3))
	errs := publish(true, 4, 5)
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], pacer.ErrFull)
	require.ErrorIs(t, publish(false, 6)[0], store.ErrFull, "ErrFull wraps the store's")
	require.ErrorIs(t, r.Add(ctx, "sub", 6), pacer.ErrFull)
	st, err := r.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, st.Values)
}

// A Runner's AddTx sends one statement on the caller's transaction and
// nothing else: no round trip of its own on the caller's connection, and
// no statement on the store's connections.
func TestRunnerAddTxRoundTrips(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	connect(t, appName(t)) // skips without a server
	storeQueries := &queryCounter{}
	storeCfg, err := pgxpool.ParseConfig(serverURL())
	require.NoError(t, err)
	storeCfg.ConnConfig.Tracer = storeQueries
	storePool, err := pgxpool.NewWithConfig(ctx, storeCfg)
	require.NoError(t, err)
	t.Cleanup(storePool.Close) // after the schema's cleanup
	s := newStore(t, storePool)
	r, err := pacer.New(pacer.Config[string, int]{Store: s, Name: "outbox", Debounce: time.Second},
		func(context.Context, string, []int) error { return nil })
	require.NoError(t, err)
	defer r.Shutdown(ctx) //nolint:errcheck // never ran

	// The caller's pool: one connection, whose statements and writes to
	// the server are counted; each write is a round trip.
	cfg, err := pgxpool.ParseConfig(serverURL())
	require.NoError(t, err)
	cfg.MaxConns = 1
	queries, writes := &queryCounter{}, &atomic.Int64{}
	cfg.ConnConfig.Tracer = queries
	dial := cfg.ConnConfig.DialFunc
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		return &writeCounter{Conn: c, n: writes}, err
	}
	caller, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(caller.Close) // after the schema's cleanup
	events := callerTable(t, caller)
	id := 0
	publish := func(addTx bool) (statements, roundTrips int64) {
		id++
		q0, w0 := queries.n.Load(), writes.Load()
		err := pgx.BeginFunc(ctx, caller, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, "INSERT INTO "+events+" (id) VALUES ($1)", id); err != nil {
				return err
			}
			if addTx {
				return r.AddTx(ctx, tx, "sub", id)
			}
			return nil
		})
		require.NoError(t, err)
		return queries.n.Load() - q0, writes.Load() - w0
	}
	publish(true) // prepares the statements on the connection
	publish(false)
	before := storeQueries.n.Load()
	plainQ, plainW := publish(false)
	withQ, withW := publish(true)
	require.Equal(t, plainQ+1, withQ, "AddTx's one statement")
	require.Equal(t, plainW+1, withW, "AddTx's one round trip")
	require.Equal(t, before, storeQueries.n.Load(), "no statement on the store's connections")
	t.Logf("a transaction of the caller: %d statements and %d round trips; with AddTx: %d and %d", plainQ, plainW, withQ, withW)
}

// callerTable makes a table of the caller's, events (id int), in a schema
// of its own, and returns its quoted name.
func callerTable(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	schema := pgx.Identifier{freshSchema(t, pool)}.Sanitize()
	_, err := pool.Exec(t.Context(), "CREATE SCHEMA "+schema+"; CREATE TABLE "+schema+".events (id int PRIMARY KEY)")
	require.NoError(t, err)
	return schema + ".events"
}

// queryCounter is a pgx.QueryTracer that counts statements.
type queryCounter struct{ n atomic.Int64 }

func (c *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// writeCounter counts the writes to a connection.
type writeCounter struct {
	net.Conn
	n *atomic.Int64
}

func (c *writeCounter) Write(b []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(b)
}
