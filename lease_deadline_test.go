package pacer_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// deadlineTTL is the LeaseTTL of the deadline tests: a lease's deadline is
// 2.69 s after its claim was sent (the TTL less TTL/10 + 10 ms); the
// engine lets it lapse at 3 s.
const (
	deadlineTTL = 3 * time.Second
	deadlineAt  = 2690 * time.Millisecond
)

// partitioned is a store cut off from the Runner as a network partition
// cuts a connection that stays open: once cut, its calls (but Add and
// Stats; with leasesOnly, only Extend and Finish) block until the test
// heals it, whatever their ctx says, as go-redis' do by default. It counts
// the Finish calls made.
type partitioned struct {
	store.Store
	leasesOnly  bool
	cut, healed chan struct{}
	finishes    atomic.Int32
}

func newPartitioned(s store.Store, leasesOnly bool) *partitioned {
	return &partitioned{Store: s, leasesOnly: leasesOnly, cut: make(chan struct{}), healed: make(chan struct{})}
}

// hang blocks until healed if the store is cut.
func (s *partitioned) hang() error {
	select {
	case <-s.cut:
		<-s.healed
		return errors.New("connection reset")
	default:
		return nil
	}
}

func (s *partitioned) Claim(ctx context.Context, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	if s.leasesOnly {
		return s.Store.Claim(ctx, queue, p)
	}
	if err := s.hang(); err != nil {
		return nil, 0, err
	}
	return s.Store.Claim(ctx, queue, p)
}

func (s *partitioned) Wait(ctx context.Context, queue string, d time.Duration) error {
	if s.leasesOnly {
		return s.Store.Wait(ctx, queue, d)
	}
	if err := s.hang(); err != nil {
		return err
	}
	return s.Store.Wait(ctx, queue, d)
}

func (s *partitioned) Extend(ctx context.Context, l store.Lease, ttl time.Duration) error {
	if err := s.hang(); err != nil {
		return err
	}
	return s.Store.Extend(ctx, l, ttl)
}

func (s *partitioned) Finish(ctx context.Context, l store.Lease, o store.Outcome) (bool, error) {
	s.finishes.Add(1)
	if err := s.hang(); err != nil {
		return false, err
	}
	return s.Store.Finish(ctx, l, o)
}

// A holder cut off from the store while its handler runs stops by its own
// clock: its handler's ctx is cancelled with ErrLeaseLost at the lease's
// deadline, although the renewal it sent never answers, and before the
// store lets another instance lease the key, which then runs it.
func TestLeaseDeadlineStopsPartitionedHolder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := store.NewMemory(store.MemoryConfig{})
		cutOff := newPartitioned(mem, false)
		t0 := time.Now()
		var (
			mu    sync.Mutex
			aCtx  context.Context
			aEnd  time.Duration
			bRuns []time.Duration
			aDone []bool // whether A's ctx was done when B's handler started
		)
		cfg := pacer.Config[string, int]{Store: cutOff, Name: "q", LeaseTTL: deadlineTTL}
		a, err := pacer.New(cfg, func(ctx context.Context, _ string, _ []int) error {
			mu.Lock()
			aCtx = ctx
			mu.Unlock()
			close(cutOff.cut)
			<-ctx.Done()
			mu.Lock()
			aEnd = time.Since(t0)
			mu.Unlock()
			return ctx.Err()
		})
		require.NoError(t, err)
		cfg.Store = mem
		b, err := pacer.New(cfg, func(context.Context, string, []int) error {
			mu.Lock()
			defer mu.Unlock()
			bRuns = append(bRuns, time.Since(t0))
			aDone = append(aDone, aCtx.Err() != nil)
			return nil
		})
		require.NoError(t, err)
		require.NoError(t, a.Add(t.Context(), "k", 1))
		stopA := runAll(t, a)
		stopB := runAll(t, b)
		time.Sleep(5 * time.Second)
		mu.Lock()
		require.Equal(t, deadlineAt, aEnd, "A stops at its deadline")
		cause := context.Cause(aCtx)
		require.ErrorIs(t, cause, pacer.ErrLeaseLost)
		require.EqualError(t, cause, "pacer: lease lost: no renewal succeeded for 2.69s, the LeaseTTL 3s less its margin of 310ms: the renewal sent 1.69s before has not answered")
		require.Equal(t, []time.Duration{deadlineTTL}, bRuns, "B runs k once the store let the lease lapse")
		require.Equal(t, []bool{true}, aDone, "A's ctx was done before B's handler started")
		mu.Unlock()
		require.Zero(t, cutOff.finishes.Load(), "A ends nothing")

		close(cutOff.healed) // the renewal that hung returns now
		stopB()
		stopA()
		st, err := mem.Stats(t.Context(), "q")
		require.NoError(t, err)
		require.Equal(t, store.Stats{}, st)
	})
}

// A worker whose store does not answer the end of a batch stops waiting
// for it LeaseTTL after it sent it, and takes its next batch; Shutdown
// waits for the call it stopped waiting for.
func TestLeaseDeadlineBoundsFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cutOff := newPartitioned(store.NewMemory(store.MemoryConfig{}), true)
		t0 := time.Now()
		var mu sync.Mutex
		started := map[string]time.Duration{}
		r, err := pacer.New(pacer.Config[string, int]{Store: cutOff, Name: "q", LeaseTTL: deadlineTTL},
			func(_ context.Context, key string, _ []int) error {
				mu.Lock()
				defer mu.Unlock()
				started[key] = time.Since(t0)
				if key == "a" {
					close(cutOff.cut) // a's Ack hangs; b's claim goes through
				}
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "b", 2))
		stop := runAll(t, r)
		time.Sleep(5 * time.Second)
		mu.Lock()
		require.Equal(t, map[string]time.Duration{"a": 0, "b": deadlineTTL}, started, "b starts when the worker gave a's Ack up")
		mu.Unlock()

		shut := make(chan struct{})
		go func() {
			defer close(shut)
			stop()
		}()
		time.Sleep(time.Minute)
		synctest.Wait()
		select {
		case <-shut:
			t.Fatal("Shutdown returned while a call to the store still ran")
		default:
		}
		close(cutOff.healed)
		<-shut
	})
}

// stalling is a store whose first Claim that leases a key returns only
// after a pause: a process stopped (SIGSTOP, a long GC) between its claim
// and the start of the handler.
type stalling struct {
	store.Store
	pause    time.Duration
	stalled  atomic.Bool
	finishes atomic.Int32
}

func (s *stalling) Claim(ctx context.Context, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	leases, next, err := s.Store.Claim(ctx, queue, p)
	if len(leases) > 0 && !s.stalled.Swap(true) {
		time.Sleep(s.pause)
	}
	return leases, next, err
}

func (s *stalling) Finish(ctx context.Context, l store.Lease, o store.Outcome) (bool, error) {
	s.finishes.Add(1)
	return s.Store.Finish(ctx, l, o)
}

// A lease that lapsed between its claim and the start of its handler is
// neither handled nor ended: another instance ran the batch meanwhile.
func TestLeaseLapsedBeforeStartIsNotRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := store.NewMemory(store.MemoryConfig{})
		stalled := &stalling{Store: mem, pause: 2 * deadlineTTL}
		t0 := time.Now()
		var mu sync.Mutex
		var runs []string
		handler := func(who string) pacer.Handler[string, int] {
			return func(ctx context.Context, _ string, _ []int) error {
				mu.Lock()
				defer mu.Unlock()
				runs = append(runs, who+" at "+time.Since(t0).String())
				return nil
			}
		}
		cfg := pacer.Config[string, int]{Store: stalled, Name: "q", LeaseTTL: deadlineTTL}
		a, err := pacer.New(cfg, handler("A"))
		require.NoError(t, err)
		cfg.Store = mem
		b, err := pacer.New(cfg, handler("B"))
		require.NoError(t, err)
		require.NoError(t, a.Add(t.Context(), "k", 1))
		stopA := runAll(t, a) // A claims k, and stalls
		stopB := runAll(t, b)
		time.Sleep(4 * deadlineTTL)
		stopA()
		stopB()
		require.Equal(t, []string{"B at 3s"}, runs)
		require.Zero(t, stalled.finishes.Load(), "A ended nothing")
		st, err := mem.Stats(t.Context(), "q")
		require.NoError(t, err)
		require.Equal(t, store.Stats{}, st)
	})
}

// stalledLimiter makes its first Wait last pause, whatever its ctx says:
// a process stopped while its batch waited for a token.
type stalledLimiter struct {
	pause   time.Duration
	stalled atomic.Bool
}

func (l *stalledLimiter) Wait(context.Context) error {
	if !l.stalled.Swap(true) {
		time.Sleep(l.pause)
	}
	return nil
}

// A lease that lapsed while its batch waited to be admitted (the renewals
// failing meanwhile) is neither handled nor ended: the batch runs at its
// next lease.
func TestLeaseLapsedWhileAdmittedIsNotRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &failing{Store: store.NewMemory(store.MemoryConfig{}), extendErr: errors.New("connection refused")}
		var attempts []int
		r, err := pacer.New(pacer.Config[string, int]{Store: st, Name: "q", LeaseTTL: deadlineTTL,
			Limiter: &stalledLimiter{pause: 2 * deadlineTTL}},
			func(ctx context.Context, _ string, _ []int) error {
				attempts = append(attempts, pacer.Attempt(ctx))
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, r.Add(t.Context(), "k", 1))
		stop := runAll(t, r)
		time.Sleep(4 * deadlineTTL)
		stop()
		require.Equal(t, []int{2}, attempts, "the first lease lapsed in the Limiter's wait")
		require.Equal(t, int32(1), st.finishes.Load(), "the Ack of the second lease")
	})
}

// lostReplies is a store whose first FinishAndClaim reaches the store
// but whose reply is held until the test heals it, as over a connection
// that stopped forwarding bytes, whatever the call's ctx says.
type lostReplies struct {
	*store.Memory
	healed chan struct{}
	held   atomic.Bool
}

func (s *lostReplies) FinishAndClaim(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) (bool, []store.Lease, time.Duration, error) {
	more, leases, next, err := s.Memory.FinishAndClaim(ctx, l, o, p)
	if !s.held.Swap(true) {
		<-s.healed
	}
	return more, leases, next, err
}

// A worker stops waiting for an end of a batch that claimed its next key
// LeaseTTL after it sent it; the key's lease lapses, and it runs at its
// next lease. The reply that comes late hands the lapsed lease over, which
// is not run.
func TestLeaseDeadlineLateClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &lostReplies{Memory: store.NewMemory(store.MemoryConfig{}), healed: make(chan struct{})}
		t0 := time.Now()
		var mu sync.Mutex
		var runs []string
		r, err := pacer.New(pacer.Config[string, int]{Store: st, Name: "q", LeaseTTL: deadlineTTL},
			func(ctx context.Context, key string, _ []int) error {
				mu.Lock()
				defer mu.Unlock()
				runs = append(runs, key+" attempt "+strconv.Itoa(pacer.Attempt(ctx))+" at "+time.Since(t0).String())
				return nil
			})
		require.NoError(t, err)
		require.NoError(t, r.Add(t.Context(), "a", 1))
		require.NoError(t, r.Add(t.Context(), "b", 2))
		stop := runAll(t, r)
		time.Sleep(10 * time.Second)
		close(st.healed)
		time.Sleep(time.Second)
		stop()
		require.Equal(t, []string{"a attempt 1 at 0s", "b attempt 2 at 3s"}, runs)
		s, err := st.Stats(t.Context(), "q")
		require.NoError(t, err)
		require.Equal(t, store.Stats{}, s)
	})
}
