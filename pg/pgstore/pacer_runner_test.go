package pgstore_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/pg/pgrate"
	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/ratelimit"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// Two pacer Runners, the instances of one service, each on a Store and a
// pool of its own on one schema: a holder whose lease lapsed is cancelled
// with ErrLeaseLost while the batch runs again under a larger fence.
func TestRunnersFenceLapsedLeasePostgres(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t, connect(t, appName(t)))
	s1, s2 := instance(t, schema), instance(t, schema)

	t.Run("a lapsed lease is fenced off", func(t *testing.T) {
		// Not a cluster's handler: once a lease lapsed, the stale holder
		// runs until it hears so, and may overlap the next.
		type run struct {
			fence uint64
			cause error // of the stale holder's ctx
		}
		runs := make(chan run, 3)
		var calls atomic.Int32
		h := func(ctx context.Context, _ string, _ []int) error {
			fence, _ := pacer.Fence(ctx)
			runs <- run{fence: fence}
			if calls.Add(1) > 1 {
				return nil
			}
			<-ctx.Done() // the stale holder stops when its renewal is refused
			runs <- run{fence: fence, cause: context.Cause(ctx)}
			return ctx.Err()
		}
		cfg := pacer.Config[string, int]{Store: s1, Name: "fenced", LeaseTTL: 600 * time.Millisecond,
			OnDrop: func(string, []int, error) { t.Error("OnDrop called") }}
		r1, _ := storetest.StartPair(t, cfg, s2, h, h)
		require.NoError(t, r1.Add(t.Context(), "k", 1))
		first := <-runs
		// The holder's process stalls past its lease, as far as the store
		// can tell: the lease lapses, and an instance takes the key again.
		_, err := connect(t, appName(t)).Exec(t.Context(),
			"UPDATE "+pgx.Identifier{schema, "keys"}.Sanitize()+" SET leased_until = now() - interval '1 second', ready_at = now() - interval '1 second' WHERE queue = 'fenced'")
		require.NoError(t, err)
		var again, stale run
		for range 2 {
			select {
			case r := <-runs:
				if r.cause != nil {
					stale = r
				} else {
					again = r
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the lapsed lease was not taken again, or its holder not stopped")
			}
		}
		require.Greater(t, again.fence, first.fence, "the next lease has a larger fence")
		require.Equal(t, first.fence, stale.fence)
		require.ErrorIs(t, stale.cause, pacer.ErrLeaseLost)
		require.Eventually(t, func() bool {
			st, err := s1.Stats(t.Context(), "fenced")
			return err == nil && st == store.Stats{}
		}, 5*time.Second, 5*time.Millisecond, "the value was acked once, by the new holder")
		require.Equal(t, int32(2), calls.Load())
	})

	st, err := s1.Stats(context.Background(), "fenced")
	require.NoError(t, err)
	require.Equal(t, store.Stats{}, st, "queue fenced: every value handled, no state left")
}

// instance returns a Store on schema with a pool of its own, as a process
// of the service would have, closed after tb. A short PollInterval bounds
// how long a Runner waits for work that no notification announced.
func instance(tb testing.TB, schema string) *pgstore.Store {
	tb.Helper()
	s, err := pgstore.New(context.Background(), connect(tb, appName(tb)), pgstore.Config{Schema: schema, PollInterval: 200 * time.Millisecond})
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

// Runners in three OS processes on one schema (storetest.RunProcesses):
// with MaxValues, adding to one queue at once, they store the bound
// exactly; handling a queue that another process pauses, they start no
// batch until it is resumed, and lose nothing; with a Config.KeyLimit
// that is a pgrate.Keyed on the same schema (KeyLimit), each key's calls
// over all three keep its rate; with tenants of weights 3 and 1
// (Tenants), their batches split 3:1; with PerKey 2, no more than 2
// batches of a key run at once across them, and 2 do.
func TestRunnerAcrossProcesses(t *testing.T) {
	t.Parallel()
	schema := freshSchema(t, connect(t, appName(t)))
	storetest.RunProcesses(t, storetest.Processes{Store: instance(t, schema), Where: schema, Child: "TestStoretestChild",
		KeyGate: keyGate, Gauge: openGauge})
}

// TestStoretestChild is one process of TestRunnerAcrossProcesses,
// on the schema it names.
func TestStoretestChild(t *testing.T) {
	storetest.Child(t, func(t *testing.T, schema string) store.Store { return instance(t, schema) }, keyGate, openGauge)
}

// gauge is a storetest.Gauge: a table of counts in the schema, apart from
// the Store's tables.
type gauge struct {
	pool   *pgxpool.Pool
	schema string
}

// openGauge is the storetest.GaugeFunc of the tests: the gauge of schema,
// whose table it makes where it is not there yet (RunProcesses opens it
// before the processes do).
func openGauge(t *testing.T, schema string) storetest.Gauge {
	g := gauge{connect(t, appName(t)), schema}
	_, err := g.pool.Exec(t.Context(), `CREATE TABLE IF NOT EXISTS `+pgx.Identifier{schema, "test_gauge"}.Sanitize()+
		` (name text PRIMARY KEY, n int NOT NULL)`)
	require.NoError(t, err)
	return g
}

func (g gauge) Add(ctx context.Context, name string, d int) (n int, err error) {
	err = g.pool.QueryRow(ctx, `INSERT INTO `+pgx.Identifier{g.schema, "test_gauge"}.Sanitize()+` AS g (name, n) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET n = g.n + EXCLUDED.n RETURNING n`, name, d).Scan(&n)
	return n, err
}

// keyGate is the storetest.KeyGateFunc of the tests: a pgrate.Keyed in
// the store's schema, with a pool of its own, whose table goes with the
// schema.
func keyGate(t *testing.T, schema string, l storetest.KeyRate) ratelimit.KeyGate[string] {
	k, err := pgrate.NewKeyed(t.Context(), connect(t, appName(t)), pgrate.KeyedConfig{Rate: l.Rate, Burst: l.Burst, Name: l.Name, Schema: schema})
	require.NoError(t, err)
	return k
}
