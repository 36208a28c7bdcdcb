package pacer_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// finishClaiming is a Memory engine that counts its Claims, Finishes and
// FinishAndClaims, and runs onFinishClaim after each FinishAndClaim.
type finishClaiming struct {
	*store.Memory
	claims, finishClaims, finishes atomic.Int32
	onFinishClaim                  func()
}

func (s *finishClaiming) Finish(ctx context.Context, l store.Lease, o store.Outcome) (bool, error) {
	s.finishes.Add(1)
	return s.Memory.Finish(ctx, l, o)
}

func (s *finishClaiming) Claim(ctx context.Context, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	s.claims.Add(1)
	return s.Memory.Claim(ctx, queue, p)
}

func (s *finishClaiming) FinishAndClaim(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) (bool, []store.Lease, time.Duration, error) {
	s.finishClaims.Add(1)
	more, ls, next, err := s.Memory.FinishAndClaim(ctx, l, o, p)
	if s.onFinishClaim != nil {
		s.onFinishClaim()
	}
	return more, ls, next, err
}

// With an engine that implements store.FinishClaimer, a worker that is
// done with a batch claims its next one in the same call: a busy Runner
// makes one call to the engine per batch, not two.
func TestFinishAndClaimSavesClaims(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &finishClaiming{Memory: store.NewMemory(store.MemoryConfig{})}
		var mu sync.Mutex
		var got []int
		r, err := pacer.New(pacer.Config[string, int]{Store: st, Name: "q", Workers: 1, MaxBatch: 1},
			func(_ context.Context, _ string, batch []int) error {
				mu.Lock()
				got = append(got, batch...)
				mu.Unlock()
				return nil
			})
		require.NoError(t, err)
		for i := range 10 {
			require.NoError(t, r.Add(t.Context(), "k", i))
		}
		stop := runAll(t, r)
		stop()
		require.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, got)
		require.Equal(t, int32(10), st.finishClaims.Load())
		require.LessOrEqual(t, st.claims.Load(), int32(2), "the first batch's Claim, and one that finds nothing")
	})
}

// A batch claimed along with the end of the last one, while the Runner
// begins to stop, is given back at once and without using an attempt: it
// does not stay leased until its TTL passes.
func TestFinishAndClaimGivenBackAtStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &finishClaiming{Memory: store.NewMemory(store.MemoryConfig{})}
		var ran []string
		r, err := pacer.New(pacer.Config[string, int]{Store: st, Name: "q", Workers: 1, LeaseTTL: time.Hour},
			func(_ context.Context, key string, _ []int) error {
				ran = append(ran, key)
				return nil
			})
		require.NoError(t, err)
		shut := make(chan error, 1)
		st.onFinishClaim = func() {
			st.onFinishClaim = nil
			go func() { shut <- r.Shutdown(context.Background()) }()
			synctest.Wait() // Shutdown stopped the claims, and waits for this batch
		}
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "b", 2))
		done := make(chan error, 1)
		go func() { done <- r.Run(context.Background()) }()
		require.NoError(t, <-shut)
		require.NoError(t, <-done)
		require.Equal(t, []string{"a"}, ran)
		require.Equal(t, int32(1), st.finishClaims.Load(), "b was claimed with the end of a")
		stats, err := st.Stats(t.Context(), "q")
		require.NoError(t, err)
		require.Equal(t, 0, stats.Leased, "b was given back")
		require.Equal(t, 1, stats.Ready)
		ls, _, err := st.Memory.Claim(t.Context(), "q", store.ClaimParams{Keys: 1, TTL: time.Minute})
		require.NoError(t, err)
		require.Len(t, ls, 1)
		require.Equal(t, "b", ls[0].Key)
		require.Equal(t, 1, ls[0].Attempt, "no attempt used")
	})
}

// With AckInBackground, a worker takes its next batch while its Ack is on
// its way: every value still runs once, in its key's order, through
// FinishAndClaims; a lease claimed by an Ack while the only worker waits
// in the engine reaches it at once (no lease waits for its TTL to lapse);
// and Shutdown returns once every Ack ended, leaving nothing leased.
func TestAckInBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &finishClaiming{Memory: store.NewMemory(store.MemoryConfig{})}
		// Each Ack takes a moment, as a commit would; and the engine's Wait
		// hears of no change, as with a lost notification, so only the
		// hand-over can wake the worker that waits in it.
		st.onFinishClaim = func() { time.Sleep(10 * time.Millisecond) }
		eng := deafWait{st}
		var mu sync.Mutex
		got := map[string][]int{}
		var events atomic.Int32
		r, err := pacer.New(pacer.Config[string, int]{Store: eng, Name: "q", Workers: 1, MaxBatch: 1, AckInBackground: true,
			OnEvent: func(e pacer.Event[string]) {
				if e.Kind == pacer.EventRerun {
					events.Add(1)
				}
			}},
			func(_ context.Context, key string, batch []int) error {
				mu.Lock()
				got[key] = append(got[key], batch...)
				mu.Unlock()
				return nil
			})
		require.NoError(t, err)
		t0 := time.Now()
		for i := range 10 {
			require.NoError(t, r.Add(t.Context(), "a", i))
			require.NoError(t, r.Add(t.Context(), "b", 100+i))
		}
		stop := runAll(t, r)
		handled := func() int {
			mu.Lock()
			defer mu.Unlock()
			return len(got["a"]) + len(got["b"])
		}
		for handled() < 20 && time.Since(t0) < time.Minute {
			time.Sleep(time.Millisecond)
		}
		require.Less(t, time.Since(t0), 10*time.Second, "no lease waited for its TTL, nor the worker for the engine's Wait")
		stop()
		require.Equal(t, map[string][]int{"a": {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "b": {100, 101, 102, 103, 104, 105, 106, 107, 108, 109}}, got)
		require.Equal(t, int32(20), st.finishClaims.Load()+st.finishes.Load(), "every Ack ended once")
		require.GreaterOrEqual(t, st.finishClaims.Load(), int32(10), "with a FinishAndClaim while the Runner ran")
		require.Equal(t, int32(18), events.Load(), "a key with more values is reported after its Ack ends")
		stats, err := st.Stats(context.Background(), "q")
		require.NoError(t, err)
		require.Equal(t, store.Stats{}, stats, "Shutdown waited for the last Acks, and gave back what they claimed")
	})
}

// deafWait is an engine whose Wait hears of no change: it sleeps d, or
// until ctx ends.
type deafWait struct{ *finishClaiming }

func (d deafWait) Wait(ctx context.Context, _ string, wait time.Duration) error {
	select {
	case <-time.After(wait):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// With AckInBackground, an Ack whose call the engine does not answer is
// given up at the lease TTL after it was sent, as a Finish would be: the
// Runner logs that the lease could not be ended, no goroutine waiting for
// it meanwhile, and Shutdown then waits for the call itself.
func TestAckInBackgroundUnanswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &finishClaiming{Memory: store.NewMemory(store.MemoryConfig{})}
		release := make(chan struct{})
		st.onFinishClaim = func() { <-release } // answers only once released
		h := &levels{msgs: map[string]slog.Level{}}
		var handled atomic.Int32
		r, err := pacer.New(pacer.Config[string, int]{Store: st, Name: "q", Workers: 1, MaxBatch: 1, AckInBackground: true,
			LeaseTTL: 3 * time.Second, Logger: slog.New(h)},
			func(context.Context, string, []int) error {
				handled.Add(1)
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		stop := runAll(t, r)
		require.Equal(t, int32(1), handled.Load())
		const unended = "pacer: could not end the lease, the batch will run again"
		logged := func() bool {
			h.mu.Lock()
			defer h.mu.Unlock()
			_, ok := h.msgs[unended]
			return ok
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		require.False(t, logged(), "given up before the lease TTL")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		require.True(t, logged(), "given up at the lease TTL")
		close(release)
		stop()
		require.Equal(t, int32(1), st.finishClaims.Load())
	})
}
