package pgrate_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/pg/pgrate"
	"github.com/pacerkit/pacer/pg/pgstore"
	"github.com/pacerkit/pacer/store/storetest"
)

// TestRunnersShareTheLimit: two pacer Runners, two instances of one
// service, each with a pgstore.Store and a pool of its own on one
// schema, and a Config.Limiter that is a Bucket of the same Name on its
// pool, make their handler calls at the rate of one bucket between them;
// a PauseAll in one's handler holds the other's calls too, until the
// pause ends.
func TestRunnersShareTheLimit(t *testing.T) {
	t.Parallel()
	const rate, burst, keys = 20, 2, 24
	p1, p2 := connect(t), connect(t)
	storeSchema, rateSchema := freshSchema(t, p1), freshSchema(t, p1)
	var stores [2]*pgstore.Store
	var buckets [2]*pgrate.Bucket
	for i, pool := range []*pgxpool.Pool{p1, p2} {
		s, err := pgstore.New(context.Background(), pool, pgstore.Config{Schema: storeSchema, PollInterval: 100 * time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		stores[i] = s
		buckets[i] = newBucket(t, pool, pgrate.BucketConfig{Rate: rate, Burst: burst, Name: "remote", Schema: rateSchema})
	}

	var mu sync.Mutex
	var calls []time.Time
	var by [2]int
	paused := make(chan time.Time, 1)
	handler := func(i int) pacer.Handler[string, int] {
		return func(ctx context.Context, key string, _ []int) error {
			mu.Lock()
			defer mu.Unlock()
			now := serverTime(t, p1)
			if key == "pause" && pacer.Attempt(ctx) == 1 {
				paused <- now
				return pacer.PauseAll(errors.New("429 Too Many Requests"), time.Second)
			}
			calls = append(calls, now)
			by[i]++
			return nil
		}
	}
	cfg := pacer.Config[string, int]{Store: stores[0], Name: "paced", Limiter: buckets[0], Workers: 4}
	r1, err := pacer.New(cfg, handler(0))
	require.NoError(t, err)
	cfg.Store, cfg.Limiter = stores[1], buckets[1]
	r2, err := pacer.New(cfg, handler(1))
	require.NoError(t, err)
	storetest.StartRunner(t, r1)
	storetest.StartRunner(t, r2)

	ctx := context.Background()
	for i := range keys {
		r := r1
		if i%2 == 1 {
			r = r2
		}
		require.NoError(t, r.Add(ctx, "k"+strconv.Itoa(i), i))
	}
	done := func(n int) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return len(calls) >= n }
	}
	require.Eventually(t, done(keys), 10*time.Second, 10*time.Millisecond)
	mu.Lock()
	span := calls[keys-1].Sub(calls[0])
	// One bucket spaces the turns of the first and the last call by
	// (keys - burst) / rate, 1.1 s; a call reads the clock a little after
	// its turn, the first maybe later than the last. Two buckets would
	// take half as long.
	least := time.Duration(keys-burst)*time.Second/rate - 100*time.Millisecond
	require.GreaterOrEqual(t, span, least, "%d calls in %v: faster than one bucket's Burst + Rate·t", keys, span)
	require.Positive(t, by[0], "the first Runner made no call")
	require.Positive(t, by[1], "the second Runner made no call")
	mu.Unlock()

	// A pause from either Runner's handler holds both.
	require.NoError(t, r1.Add(ctx, "pause", 0))
	at := <-paused
	// The pause holds from when the Runner sets it, a moment after the
	// handler returned: the keys come once it is set.
	require.Eventually(t, func() bool {
		_, until := bucketRow(t, p1, rateSchema, "remote")
		return until.After(at)
	}, 10*time.Second, 5*time.Millisecond, "the pause was not set")
	for i := range 4 {
		r := r1
		if i%2 == 1 {
			r = r2
		}
		require.NoError(t, r.Add(ctx, "after"+strconv.Itoa(i), i))
	}
	require.Eventually(t, done(keys+5), 10*time.Second, 10*time.Millisecond) // the 4 and the paused key's retry
	mu.Lock()
	defer mu.Unlock()
	for _, c := range calls[keys:] {
		require.GreaterOrEqual(t, c.Sub(at), time.Second, "a call during the pause")
	}
}
