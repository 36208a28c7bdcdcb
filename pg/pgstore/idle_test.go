//go:build unix

package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestIdleRunnersCost: four idle Runners, the processes of one service
// with 2 workers each, on one queue, cost the server one transaction per
// Store per PollInterval (the look of its listening connection), and
// nothing else. The server counts them itself (pg_stat_database), on a
// server of the test's own, so that no other test's transactions count.
func TestIdleRunnersCost(t *testing.T) {
	t.Parallel()
	const (
		runners = 4
		every   = pgstore.DefaultPollInterval
		window  = 8 * time.Second
	)
	srv := startPGServer(t, "autovacuum=off")
	ctx := t.Context()
	observer, err := pgx.Connect(ctx, srv.url())
	require.NoError(t, err)
	t.Cleanup(func() { _ = observer.Close(context.Background()) })

	pools := make([]*pgxpool.Pool, runners)
	for i := range pools {
		pools[i], err = pgxpool.New(ctx, srv.url())
		require.NoError(t, err)
		t.Cleanup(pools[i].Close)
		s, err := pgstore.New(ctx, pools[i], pgstore.Config{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		r, err := pacer.New(pacer.Config[string, int]{Store: s, Name: "q", Workers: 2},
			func(context.Context, string, []int) error { return nil })
		require.NoError(t, err)
		storetest.StartRunner(t, r)
	}
	// The Runners claim, find nothing and wait. A backend reports what it
	// counted at most once a second, and an idle one up to 10 s late, but
	// at once when it exits: the pools' idle connections end here, and the
	// listening ones report at their next look.
	time.Sleep(time.Second)
	for _, p := range pools {
		p.Reset()
	}
	time.Sleep(every + time.Second)

	commits := func() int64 {
		var n int64
		require.NoError(t, observer.QueryRow(ctx,
			"SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&n))
		return n
	}
	before := commits()
	time.Sleep(window)
	n := commits() - before - 1 // the observer's first
	t.Logf("%d idle Runners of 2 workers: %d transactions in %v, %.2f a second", runners, n, window, float64(n)/window.Seconds())
	// A look per Store per PollInterval, and one more where the window
	// cuts a period.
	require.LessOrEqual(t, n, int64(runners*(int(window/every)+1)))
}

// TestIdleWaitsCostPerStore: the Waits of a Store, however many, share its
// listening connection's look at their queue every PollInterval; a Wait
// costs one statement of its own, when it begins.
func TestIdleWaitsCostPerStore(t *testing.T) {
	t.Parallel()
	const (
		every  = 50 * time.Millisecond
		window = time.Second
	)
	schema := freshSchema(t, connect(t, appName(t)))
	for _, waits := range []int{1, 16} {
		cfg, err := pgxpool.ParseConfig(serverURL())
		require.NoError(t, err)
		statements := &queryCounter{}
		cfg.ConnConfig.Tracer = statements
		pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
		require.NoError(t, err)
		s, err := pgstore.New(t.Context(), pool, pgstore.Config{Schema: schema, PollInterval: every})
		require.NoError(t, err)

		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, waits)
		for range waits {
			go func() {
				for {
					if err := s.Wait(ctx, "q", store.Never); err != nil {
						done <- err
						return
					}
				}
			}()
		}
		// Until the listener listens, each Wait looks on its own: measure
		// once it does and every Wait sleeps, however slow the machine.
		require.Eventually(t, func() bool {
			n, listening := pgstore.Waiting(s, "q")
			return listening && n == waits
		}, 10*time.Second, every)
		time.Sleep(4 * every) // for the Waits' first reads
		before, t0 := statements.n.Load(), time.Now()
		time.Sleep(window)
		// The look is on a ticker: bound it by the time that passed,
		// which a loaded machine stretches past window.
		n, looks := statements.n.Load()-before, int64(time.Since(t0)/every)
		cancel()
		for range waits {
			require.ErrorIs(t, <-done, context.Canceled)
		}
		require.NoError(t, s.Close())
		pool.Close()
		t.Logf("%d Waits: %d statements in %v", waits, n, window)
		require.LessOrEqual(t, n, looks+2, "%d Waits", waits)
	}
}
