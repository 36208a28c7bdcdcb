package pacer_test

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// roundTrip adds the values of keys at a Runner on a store and returns the
// keys and batches its handler saw.
func roundTrip[K comparable](t *testing.T, keys []K, codec pacer.Codec[K]) map[K][]string {
	t.Helper()
	var mu sync.Mutex
	got := map[K][]string{}
	r, err := pacer.New(pacer.Config[K, string]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q", KeyCodec: codec},
		func(_ context.Context, key K, batch []string) error {
			mu.Lock()
			defer mu.Unlock()
			got[key] = append(got[key], batch...)
			return nil
		})
	require.NoError(t, err)
	for _, k := range keys {
		require.NoError(t, r.Add(t.Context(), k, "v"))
	}
	done := make(chan error, 1)
	go func() { done <- r.Run(context.Background()) }()
	synctest.Wait()
	require.NoError(t, r.Shutdown(context.Background()))
	require.NoError(t, <-done)
	return got
}

type userID string

type level uint8

type tenantKey struct {
	Tenant string
	ID     int
}

// String keys and integer keys of every kind, named types included, work
// on a store without configuration; other keys need a KeyCodec, which New
// asks for.
func TestStoreKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := []string{"v"}
		require.Equal(t, map[string][]string{"": v, "a b": v, "\x00é": v}, roundTrip(t, []string{"", "a b", "\x00é"}, nil))
		require.Equal(t, map[userID][]string{"alice": v}, roundTrip(t, []userID{"alice"}, nil))
		require.Equal(t, map[int][]string{-1: v, 0: v, math.MaxInt: v, math.MinInt: v}, roundTrip(t, []int{-1, 0, math.MaxInt, math.MinInt}, nil))
		require.Equal(t, map[int8][]string{-128: v, 127: v}, roundTrip(t, []int8{-128, 127}, nil))
		require.Equal(t, map[uint64][]string{math.MaxUint64: v}, roundTrip(t, []uint64{math.MaxUint64}, nil))
		require.Equal(t, map[level][]string{255: v}, roundTrip(t, []level{255}, nil))
		k := tenantKey{"acme", 7}
		require.Equal(t, map[tenantKey][]string{k: v}, roundTrip(t, []tenantKey{k}, pacer.JSON[tenantKey]{}))
	})

	_, err := pacer.New(pacer.Config[tenantKey, int]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q"},
		func(context.Context, tenantKey, []int) error { return nil })
	require.EqualError(t, err, "pacer: Config.KeyCodec must be set with Config.Store for keys of type pacer_test.tenantKey: only string and integer keys have a default encoding")
	// Without a store any comparable key works.
	_, err = pacer.New(pacer.Config[tenantKey, int]{}, func(context.Context, tenantKey, []int) error { return nil })
	require.NoError(t, err)
}

// A stored value that no longer decodes (another version of the program
// wrote it) is never handed to the handler and never retried: its batch
// is dropped at once, the store keeps it as stored, with the error, as a
// dead letter, and OnDrop gets the values of the batch that decoded. The
// key's later values go on.
func TestStoreUndecodable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		mem := store.NewMemory(store.MemoryConfig{})
		raw := [][]byte{[]byte("1"), []byte(`"one"`), []byte("3"), []byte("{")}
		require.NoError(t, mem.Add(ctx, "q", "k", raw, store.AddParams{}))
		require.NoError(t, mem.Add(ctx, "q", "k", [][]byte{[]byte("5")}, store.AddParams{}))
		rc := newRecorder(nil)
		cfg := pacer.Config[string, int]{Store: mem, Name: "q", MaxBatch: 4, Exhausted: pacer.ExhaustedHold}
		r := newRunner(t, cfg, rc)
		stop := start(t, r)
		stop()
		require.Equal(t, []call{{"k", []int{5}, 0, 1}}, rc.Calls())
		require.Equal(t, []call{{Key: "k", Batch: []int{1, 3}}}, rc.Drops())
		require.ErrorIs(t, rc.dropErr[0], pacer.ErrUndecodable)
		require.ErrorContains(t, rc.dropErr[0], "2 of 4 values of the batch, the first at index 1: json: cannot unmarshal string")
		dead, err := mem.DeadLetters(ctx, "q", 0, 10)
		require.NoError(t, err)
		require.Len(t, dead, 1)
		require.Equal(t, raw, dead[0].Values)
		require.Equal(t, rc.dropErr[0].Error(), dead[0].Err)
		require.Equal(t, uint64(1), stats(t, r).Batches, "the handler saw only [5]")

		// A key that does not decode is dropped too, with every value.
		require.NoError(t, mem.Add(ctx, "ints", "x", [][]byte{[]byte(`"a"`)}, store.AddParams{}))
		var dropped []error
		ri, err := pacer.New(pacer.Config[int, string]{Store: mem, Name: "ints",
			OnDrop: func(key int, batch []string, err error) {
				if key == 0 && slices.Equal(batch, []string{"a"}) {
					dropped = append(dropped, err)
				}
			}}, func(context.Context, int, []string) error { return nil })
		require.NoError(t, err)
		done := make(chan error, 1)
		go func() { done <- ri.Run(context.Background()) }()
		time.Sleep(time.Second)
		require.NoError(t, ri.Shutdown(context.Background()))
		require.NoError(t, <-done)
		require.Len(t, dropped, 1)
		require.EqualError(t, dropped[0], `permanent: pacer: stored value does not decode: key "x": pacer: key "x" is not a int: strconv.ParseInt: parsing "x": invalid syntax`)
	})
}
