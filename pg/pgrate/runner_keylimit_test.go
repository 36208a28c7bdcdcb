package pgrate_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/pg/pgrate"
)

// TestRunnerKeyLimitAcrossInstances: two Runners, each with its own pool,
// share a Keyed's per-key buckets as their Config.KeyLimit. The calls of
// one key, counted over both Runners on the server's clock, keep the
// key's rate (one every 100 ms), while another key of the same Keyed runs
// at once on each of them: its values are not held behind the limited
// key's.
func TestRunnerKeyLimitAcrossInstances(t *testing.T) {
	t.Parallel()
	p1, p2 := connect(t), connect(t)
	cfg := pgrate.KeyedConfig{Rate: 10, Burst: 1, Name: "accounts", Schema: freshSchema(t, p1)}
	const per = 6 // values of "acct" per Runner

	var mu sync.Mutex
	var acct []time.Time
	others := 0
	handler := func(_ context.Context, key string, _ []int) error {
		mu.Lock()
		defer mu.Unlock()
		if key == "acct" {
			acct = append(acct, serverTime(t, p1))
		} else {
			others++
		}
		return nil
	}
	ctx := context.Background()
	var runners []*pacer.Runner[string, int]
	for _, p := range []*pgxpool.Pool{p1, p2} {
		r, err := pacer.New(pacer.Config[string, int]{
			Workers:  2,
			MaxBatch: 1,
			KeyLimit: newKeyed(t, p, cfg),
		}, handler)
		require.NoError(t, err)
		for i := range per {
			require.NoError(t, r.Add(ctx, "acct", i))
			require.NoError(t, r.Add(ctx, "other"+string(rune('a'+i)), i))
		}
		runners = append(runners, r)
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Go(func() { _ = r.Run(runCtx) })
	}
	start := time.Now()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return others == 2*per
	}, 10*time.Second, 5*time.Millisecond, "every other key to run")
	othersDone := time.Since(start)
	for _, r := range runners {
		require.NoError(t, r.Shutdown(ctx)) // handles every value left
	}
	cancel()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, acct, 2*per)
	slices.SortFunc(acct, func(a, b time.Time) int { return a.Compare(b) })
	// 12 tokens at 10 a second take 1.1 s; the other keys need none of it.
	require.Less(t, othersDone, 500*time.Millisecond, "the other keys waited for acct's tokens")
	for i := 1; i < len(acct); i++ {
		// The server's clock decides; each call reads it a round trip or
		// two after its token was taken, on either instance.
		require.GreaterOrEqual(t, acct[i].Sub(acct[i-1]), 80*time.Millisecond, "calls %d and %d of acct came too close", i-1, i)
	}
	require.GreaterOrEqual(t, acct[len(acct)-1].Sub(acct[0]), 1050*time.Millisecond)
	for i, r := range runners {
		st, err := r.Stats(ctx)
		require.NoError(t, err)
		require.NotZero(t, st.KeyLimited, "runner %d never deferred acct", i)
	}
}
