package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
)

// TestProperties drives Runners with random keys, values, handler failures
// and time steps, and checks them against a reference model that is just
// the list of values added per key: every value ends exactly once (handled
// or dropped), the ends of a key come in Add order, one key never runs
// twice at once, and strict mode hands out one value at a time.
func TestProperties(t *testing.T) {
	for _, maxBatch := range []int{0, 1, 3} {
		for seed := range uint64(12) {
			t.Run(fmt.Sprintf("maxBatch=%d/seed=%d", maxBatch, seed), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { checkProperties(t, maxBatch, seed) })
			})
		}
	}
}

func checkProperties(t *testing.T, maxBatch int, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, uint64(maxBatch)))
	cfg := pacer.Config[string, int]{
		MaxBatch: maxBatch,
		Workers:  1 + rng.IntN(3),
		Retry:    pacer.Backoff{Initial: 100 * time.Millisecond, Max: time.Second, Attempts: 3},
	}
	if rng.IntN(2) == 0 {
		cfg.Debounce, cfg.MaxWait = time.Second, 3*time.Second
	}

	var mu sync.Mutex
	ended := map[string][]int{} // per key, values in the order their batch ended
	busy := map[string]bool{}
	overlap, oversize := false, false
	cfg.OnDrop = func(key string, batch []int, _ error) {
		mu.Lock()
		defer mu.Unlock()
		ended[key] = append(ended[key], batch...)
	}
	handler := func(ctx context.Context, key string, batch []int) error {
		mu.Lock()
		overlap = overlap || busy[key]
		oversize = oversize || (maxBatch > 0 && len(batch) > maxBatch)
		busy[key] = true
		mu.Unlock()
		defer func() {
			mu.Lock()
			busy[key] = false
			mu.Unlock()
		}()
		// The outcome is a function of the batch and the attempt, so runs
		// are reproducible whatever the interleaving of workers.
		h := fnv.New64a()
		fmt.Fprint(h, batch[0], pacer.Attempt(ctx), seed)
		x := h.Sum64()
		time.Sleep(time.Duration(x%300) * time.Millisecond)
		var err error
		switch x % 10 {
		case 0, 1:
			err = errors.New("transient")
		case 2:
			err = pacer.Permanent(errors.New("bad"))
		case 3:
			err = pacer.RetryAfter(errors.New("429"), 500*time.Millisecond)
		case 4:
			panic("handler bug")
		}
		if err == nil {
			mu.Lock()
			ended[key] = append(ended[key], batch...)
			mu.Unlock()
		}
		return err
	}
	r, err := pacer.New(cfg, handler)
	require.NoError(t, err)
	stop := start(t, r)

	added := map[string][]int{}
	for v := range 300 {
		if rng.IntN(3) == 0 {
			time.Sleep(time.Duration(rng.IntN(2000)) * time.Millisecond)
		}
		key := fmt.Sprint("k", rng.IntN(5))
		require.NoError(t, r.Add(t.Context(), key, v))
		added[key] = append(added[key], v)
	}
	stop()

	require.False(t, overlap, "two calls of one key at once")
	require.False(t, oversize, "a batch larger than MaxBatch")
	require.Equal(t, added, ended, "every value ends once, in Add order per key")
	st := stats(t, r)
	require.Equal(t, uint64(300), st.Received)
	require.Equal(t, uint64(300), st.Handled+st.Dropped)
	require.Zero(t, st.Queued+st.InFlight+st.Pending+st.Held)
	require.NotZero(t, st.Retries, "the run exercised retries")
	require.NotZero(t, st.Dropped, "the run exercised drops")
}
