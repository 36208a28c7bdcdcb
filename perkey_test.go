package pacer_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// TestPerKeyRunsBatchesOfAKeyAtOnce: with PerKey 3 and more workers, up
// to 3 batches of one busy key run at once, never more, each of values
// that follow each other, and every value is handled once.
func TestPerKeyRunsBatchesOfAKeyAtOnce(t *testing.T) {
	for _, on := range perKeyPaths() {
		t.Run(on.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var (
					mu        sync.Mutex
					now, most int
					batches   [][]int
					handled   []int
				)
				rc := newRecorder(func(ctx context.Context, key string, batch []int) error {
					mu.Lock()
					now++
					most = max(most, now)
					batches = append(batches, batch)
					mu.Unlock()
					time.Sleep(time.Second)
					mu.Lock()
					now--
					handled = append(handled, batch...)
					mu.Unlock()
					return nil
				})
				r := newRunner(t, on.on(pacer.Config[string, int]{Workers: 5, PerKey: 3, MaxBatch: 2}), rc)
				ctx := context.Background()
				for i := range 20 {
					require.NoError(t, r.Add(ctx, "k", i))
				}
				stop := start(t, r)
				synctest.Wait() // three batches of k are in their handlers
				x, err := r.Explain(ctx, "k")
				require.NoError(t, err)
				require.Equal(t, 3, x.Leases, "%s", x)
				require.Contains(t, x.String(), "(3 of 3 batches running)")
				time.Sleep(time.Minute)
				synctest.Wait()
				stop()
				require.Equal(t, 3, most, "batches of one key running at once")
				want := make([]int, 20)
				for i := range want {
					want[i] = i
				}
				for _, b := range batches {
					require.Len(t, b, 2)
					require.Equal(t, b[0]%2, 0, "a batch holds values that follow each other: %v", b)
					require.Equal(t, b[0]+1, b[1])
				}
				slices.Sort(handled)
				require.Equal(t, want, handled)
			})
		})
	}
}

// TestPerKeyRefused: New refuses PerKey with strict order, below 0, and
// on a Store that does not lease several batches of a key, naming the
// field; in the process it takes any PerKey.
func TestPerKeyRefused(t *testing.T) {
	h := func(context.Context, string, []int) error { return nil }
	for _, cfg := range []pacer.Config[string, int]{
		{PerKey: -1},
		{PerKey: 2, MaxBatch: 1},
		{PerKey: 2, Store: onePerKey{store.NewMemory(store.MemoryConfig{})}, Name: "q"},
	} {
		_, err := pacer.New(cfg, h)
		require.ErrorContains(t, err, "Config.PerKey")
	}
	_, err := pacer.New(pacer.Config[string, int]{PerKey: 1, MaxBatch: 1}, h)
	require.NoError(t, err, "PerKey 1 is strict order's own")
	r, err := pacer.New(pacer.Config[string, int]{PerKey: 3}, h)
	require.NoError(t, err, "the process leases several batches of a key")
	require.NoError(t, r.Shutdown(context.Background()))
}

// onePerKey is a Store that does not implement store.PerKeyClaimer.
type onePerKey struct{ store.Store }

type perKeyPath struct {
	name string
	on   path
}

// perKeyPaths are the paths that lease several batches of a key.
func perKeyPaths() []perKeyPath {
	return []perKeyPath{{"in-process", inProcess}, {"store", onStore}}
}
