package pacer_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// instances is a handler shared by several Runners on one store, the
// instances of one service: it checks that one key never runs on two of
// them at once and that each lease of a key has a larger fence than the
// one before, and records the values handled successfully.
type instances struct {
	t  *testing.T
	fn func(ctx context.Context, inst int, key string, batch []int) error

	mu      sync.Mutex
	busy    map[string]int // key -> instance handling it
	fences  map[string]uint64
	done    map[string][]int // values handled successfully, per key
	batches [][]int
	by      map[int]int // batches handled per instance
}

func newInstances(t *testing.T, fn func(ctx context.Context, inst int, key string, batch []int) error) *instances {
	return &instances{t: t, fn: fn, busy: map[string]int{}, fences: map[string]uint64{}, done: map[string][]int{}, by: map[int]int{}}
}

// handler returns the handler of instance inst (1, 2, ...).
func (in *instances) handler(inst int) pacer.Handler[string, int] {
	return func(ctx context.Context, key string, batch []int) error {
		fence, ok := pacer.Fence(ctx)
		in.mu.Lock()
		assert.True(in.t, ok, "a handler on a store has a fence")
		assert.Zero(in.t, in.busy[key], "key %s runs on instances %d and %d at once", key, in.busy[key], inst)
		assert.Greater(in.t, fence, in.fences[key], "key %s: the fence grows with each lease", key)
		in.busy[key], in.fences[key] = inst, fence
		in.mu.Unlock()
		var err error
		if in.fn != nil {
			err = in.fn(ctx, inst, key, batch)
		}
		in.mu.Lock()
		defer in.mu.Unlock()
		in.busy[key] = 0
		if err == nil {
			in.done[key] = append(in.done[key], batch...)
			in.batches = append(in.batches, slices.Clone(batch))
			in.by[inst]++
		}
		return err
	}
}

// runAll runs rs in the background and returns a function that shuts them
// all down gracefully.
func runAll(t *testing.T, rs ...*pacer.Runner[string, int]) (stop func()) {
	t.Helper()
	done := make(chan error, len(rs))
	for _, r := range rs {
		go func() { done <- r.Run(context.Background()) }()
	}
	synctest.Wait()
	return func() {
		t.Helper()
		for _, r := range rs {
			require.NoError(t, r.Shutdown(context.Background()))
		}
		for range rs {
			require.NoError(t, <-done)
		}
	}
}

// Two instances on one store, three workers each, strict mode: values of
// 20 keys added at either instance run one key at a time across both, with
// growing fences, and each key's values succeed in Add order, although
// some fail on their first attempt.
func TestStoreInstancesShareOrderAndExclusivity(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := newInstances(t, func(ctx context.Context, _ int, _ string, batch []int) error {
			time.Sleep(time.Duration(batch[0]%5) * time.Millisecond)
			if batch[0]%7 == 0 && pacer.Attempt(ctx) == 1 {
				return errors.New("transient")
			}
			return nil
		})
		cfg := pacer.Config[string, int]{
			Store: store.NewMemory(store.MemoryConfig{}), Name: "q",
			MaxBatch: 1, Workers: 3, Retry: pacer.Backoff{Initial: 10 * time.Millisecond},
		}
		r1, err := pacer.New(cfg, in.handler(1))
		require.NoError(t, err)
		r2, err := pacer.New(cfg, in.handler(2))
		require.NoError(t, err)
		stop := runAll(t, r1, r2)
		want := map[string][]int{}
		for i := range 600 {
			key := fmt.Sprint("k", i*7%20)
			want[key] = append(want[key], i)
			require.NoError(t, []*pacer.Runner[string, int]{r1, r2}[i*i%2].Add(t.Context(), key, i))
			if i%10 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		time.Sleep(time.Minute)
		stop()
		in.mu.Lock()
		defer in.mu.Unlock()
		require.Equal(t, want, in.done)
		require.Positive(t, in.by[1])
		require.Positive(t, in.by[2])
		st1, st2 := stats(t, r1), stats(t, r2)
		require.Equal(t, uint64(600), st1.Handled+st2.Handled)
		require.Zero(t, st1.Values, "the store is empty")
	})
}

// Debounce and max-wait live in the store: values of one key added at two
// instances within the quiet period run as one batch, and a key that never
// goes quiet still runs MaxWait after its first value.
func TestStoreDebounceAcrossInstances(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var ats []time.Duration
		in := newInstances(t, func(context.Context, int, string, []int) error {
			ats = append(ats, time.Since(t0)) // one key: calls never overlap
			return nil
		})
		cfg := pacer.Config[string, int]{
			Store: store.NewMemory(store.MemoryConfig{}), Name: "q",
			Debounce: time.Second, MaxWait: 3 * time.Second, Workers: 2,
		}
		r1, err := pacer.New(cfg, in.handler(1))
		require.NoError(t, err)
		r2, err := pacer.New(cfg, in.handler(2))
		require.NoError(t, err)
		stop := runAll(t, r1, r2)
		rs := []*pacer.Runner[string, int]{r1, r2}
		for i, at := range []time.Duration{0, 500 * time.Millisecond, 900 * time.Millisecond} {
			time.Sleep(at - time.Since(t0))
			require.NoError(t, rs[i%2].Add(t.Context(), "u", i))
		}
		time.Sleep(5*time.Second - time.Since(t0)) // one batch at 1.9 s
		for i := range 10 {                        // every 400 ms from 5 s to 8.6 s, at alternate instances
			require.NoError(t, rs[i%2].Add(t.Context(), "u", 10+i))
			time.Sleep(400 * time.Millisecond)
		}
		time.Sleep(5 * time.Second)
		stop()
		in.mu.Lock()
		defer in.mu.Unlock()
		require.Equal(t, [][]int{{0, 1, 2}, seq(10, 18), {18, 19}}, in.batches)
		require.Equal(t, []time.Duration{seconds(1.9), seconds(8), seconds(9.6)}, ats)
	})
}

// A Runner whose Shutdown gives up mid-lease cancels its handler and hands
// the batch back to the store without using an attempt: the other
// instance takes it at once, and nothing goes to the stopped one's OnDrop.
func TestStoreShutdownHandsLeaseToOtherInstance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		var cause error
		var second pacer.Event[string]
		in := newInstances(t, func(ctx context.Context, inst int, _ string, _ []int) error {
			if inst == 1 {
				<-ctx.Done()
				cause = context.Cause(ctx)
				return ctx.Err()
			}
			return nil
		})
		cfg := pacer.Config[string, int]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q"}
		cfg1 := cfg
		cfg1.OnDrop = func(string, []int, error) { t.Error("OnDrop called") }
		r1, err := pacer.New(cfg1, in.handler(1))
		require.NoError(t, err)
		cfg2 := cfg
		cfg2.OnEvent = func(e pacer.Event[string]) {
			if e.Kind == pacer.EventStarted {
				second = e
			}
		}
		r2, err := pacer.New(cfg2, in.handler(2))
		require.NoError(t, err)

		require.NoError(t, r1.Add(t.Context(), "k", 1))
		done1 := make(chan error, 1)
		go func() { done1 <- r1.Run(context.Background()) }()
		synctest.Wait() // r1 holds k
		stop2 := runAll(t, r2)

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = r1.Shutdown(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.ErrorContains(t, err, "went back to the store")
		require.NoError(t, <-done1)
		require.ErrorIs(t, cause, pacer.ErrClosed)
		synctest.Wait()
		require.Equal(t, "k", second.Key)
		require.Equal(t, 1, second.Attempt, "a deferred batch keeps its attempt")
		require.Equal(t, time.Second, second.Time.Sub(t0), "taken at once")
		stop2()
		require.Equal(t, map[string][]int{"k": {1}}, in.done)
	})
}

// A graceful Shutdown with a store stops claiming and lets the running
// batch finish; what is stored stays for the next Runner, which a second
// instance started later handles.
func TestStoreShutdownLeavesValuesStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := newInstances(t, func(context.Context, int, string, []int) error {
			time.Sleep(time.Second)
			return nil
		})
		cfg := pacer.Config[string, int]{
			Store: store.NewMemory(store.MemoryConfig{}), Name: "q",
			OnDrop: func(string, []int, error) { t.Error("OnDrop called") },
		}
		r1, err := pacer.New(cfg, in.handler(1))
		require.NoError(t, err)
		for _, k := range []string{"a", "b", "c"} {
			require.NoError(t, r1.Add(t.Context(), k, 1))
		}
		stop1 := runAll(t, r1)
		stop1() // a was running: it finishes; b and c stay stored
		st := stats(t, r1)
		require.Equal(t, uint64(1), st.Handled)
		require.Equal(t, 2, st.Values)
		require.Equal(t, 2, st.Queued)
		require.ErrorIs(t, r1.Add(t.Context(), "d", 1), pacer.ErrClosed)

		r2, err := pacer.New(cfg, in.handler(2))
		require.NoError(t, err)
		stop2 := runAll(t, r2)
		time.Sleep(5 * time.Second)
		stop2()
		require.Equal(t, map[string][]int{"a": {1}, "b": {1}, "c": {1}}, in.done)
		require.Equal(t, map[int]int{1: 1, 2: 2}, in.by)
	})
}

// Ending Run's ctx pauses a Runner on a store as it does in the process:
// the running batch goes back to its key without using an attempt, and a
// later Run handles it.
func TestStoreRunContextEndsPauses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []int
		in := newInstances(t, func(ctx context.Context, _ int, _ string, _ []int) error {
			attempts = append(attempts, pacer.Attempt(ctx))
			if len(attempts) == 1 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		})
		r, err := pacer.New(pacer.Config[string, int]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q"}, in.handler(1))
		require.NoError(t, err)
		require.NoError(t, r.Add(t.Context(), "k", 1))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		synctest.Wait()
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)
		stop := runAll(t, r)
		stop()
		require.Equal(t, []int{1, 1}, attempts)
		require.Equal(t, map[string][]int{"k": {1}}, in.done)
	})
}

// unreachable is a store that fails every call while down is set, as an
// engine behind a broken connection does.
type unreachable struct {
	store.Store
	down   atomic.Bool
	claims atomic.Int32 // Claims refused
}

var errUnreachable = errors.New("dial tcp: connection refused")

func (s *unreachable) Add(ctx context.Context, q, k string, v [][]byte, p store.AddParams) error {
	if s.down.Load() {
		return errUnreachable
	}
	return s.Store.Add(ctx, q, k, v, p)
}

func (s *unreachable) Claim(ctx context.Context, q string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	if s.down.Load() {
		s.claims.Add(1)
		return nil, 0, errUnreachable
	}
	return s.Store.Claim(ctx, q, p)
}

func (s *unreachable) Stats(ctx context.Context, q string) (store.Stats, error) {
	if s.down.Load() {
		return store.Stats{}, errUnreachable
	}
	return s.Store.Stats(ctx, q)
}

// While the store is unreachable, Add and Stats fail at once and accept
// nothing, and the workers back off (the Retry backoff, capped at the
// lease TTL), log a warning, and resume by themselves when it returns.
func TestStoreUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := store.NewMemory(store.MemoryConfig{})
		require.NoError(t, mem.Add(t.Context(), "q", "k", [][]byte{[]byte("1")}, store.AddParams{}))
		st := &unreachable{Store: mem}
		st.down.Store(true)
		h := &levels{msgs: map[string]slog.Level{}}
		rc := newRecorder(nil)
		r := newRunner(t, pacer.Config[string, int]{
			Store: st, Name: "q", LeaseTTL: 3 * time.Second, Logger: slog.New(h),
			Retry: pacer.Backoff{Initial: time.Second},
		}, rc)
		require.ErrorIs(t, r.Add(t.Context(), "k", 2), errUnreachable)
		_, err := r.Stats(t.Context())
		require.ErrorIs(t, err, errUnreachable)

		stop := start(t, r)
		time.Sleep(7 * time.Second) // claims fail at 0, 1, 3 and 6 s
		require.Equal(t, int32(4), st.claims.Load())
		require.Empty(t, rc.Calls())
		st.down.Store(false) // the next claim, at 9 s, works
		time.Sleep(3 * time.Second)
		stop()
		require.Equal(t, []call{{"k", []int{1}, 9 * time.Second, 1}}, rc.Calls())
		require.Equal(t, slog.LevelWarn, h.msgs["pacer: store failed, the workers wait"])
		s := stats(t, r)
		require.Equal(t, uint64(0), s.Received, "the value Add refused is not counted")
		require.Zero(t, s.Values)
	})
}
