package fifo

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
)

func newGroups[K comparable, M any](t *testing.T, maxBatch int) *Groups[K, M] {
	t.Helper()
	g, err := NewGroups[K, M](GroupsConfig{MaxBatch: maxBatch})
	require.NoError(t, err)
	t.Cleanup(func() { g.Close(nil) })
	return g
}

func mustLease[K comparable, M any](t *testing.T, g *Groups[K, M]) Lease[K, M] {
	t.Helper()
	l, err := g.Get(context.Background())
	require.NoError(t, err)
	return l
}

func TestNewGroupsValidates(t *testing.T) {
	_, err := NewGroups[string, int](GroupsConfig{MaxBatch: -1})
	require.EqualError(t, err, "fifo: GroupsConfig.MaxBatch must be >= 0, got -1")
}

func TestGroupsMaxBatch(t *testing.T) {
	coalesce := newGroups[string, int](t, 0)
	require.NoError(t, coalesce.Put("k", 1, 2))
	require.NoError(t, coalesce.Put("k", 3))
	l := mustLease(t, coalesce)
	require.Equal(t, []int{1, 2, 3}, l.Messages)
	require.Equal(t, 1, l.Attempt)
	coalesce.Ack(l)
	require.Equal(t, 0, coalesce.Keys())

	strict := newGroups[string, int](t, 1)
	require.NoError(t, strict.Put("k", 1, 2, 3))
	for want := 1; want <= 3; want++ {
		l := mustLease(t, strict)
		require.Equal(t, []int{want}, l.Messages)
		require.Equal(t, 3-want, strict.Len(), "leased messages are not counted")
		strict.Ack(l)
	}
	require.Equal(t, 0, strict.Keys())
}

// TestGroupsOneLeasePerKeyAndTail checks that messages put during a lease
// wait behind it, and that the key then goes to the tail of the ready
// order, behind keys that were waiting.
func TestGroupsOneLeasePerKeyAndTail(t *testing.T) {
	g := newGroups[string, string](t, 0)
	require.NoError(t, g.Put("a", "a1"))
	require.NoError(t, g.Put("b", "b1"))
	la := mustLease(t, g)
	require.Equal(t, "a", la.Key)
	require.NoError(t, g.Put("a", "a2"))
	require.NoError(t, g.Put("c", "c1"))
	lb := mustLease(t, g)
	require.Equal(t, "b", lb.Key)
	lc := mustLease(t, g)
	require.Equal(t, "c", lc.Key, "a is leased, so a2 waits")
	require.Equal(t, 3, g.Keys())
	require.Equal(t, 1, g.Len())
	require.Equal(t, 3, g.Leased())
	require.NoError(t, g.Put("d", "d1"))
	g.Ack(la)
	require.Equal(t, "d", mustLease(t, g).Key, "d was ready before a's lease ended")
	la2 := mustLease(t, g)
	require.Equal(t, []string{"a2"}, la2.Messages)
	require.Equal(t, 1, la2.Attempt)
}

func TestGroupsRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		start := time.Now()
		require.NoError(t, g.Put("a", 1, 2))
		require.NoError(t, g.Put("b", 10))
		l := mustLease(t, g)
		g.Retry(l, 2*time.Second)
		require.Equal(t, 3, g.Len(), "a retried lease counts as waiting again")
		lb := mustLease(t, g)
		require.Equal(t, "b", lb.Key, "a is unavailable during its delay")
		g.Ack(lb)
		l = mustLease(t, g) // blocks until the delay ends
		require.Equal(t, 2*time.Second, time.Since(start))
		require.Equal(t, Lease[string, int]{Key: "a", Messages: []int{1}, Attempt: 2, gr: l.gr, token: l.token}, l)
		g.Retry(l, 0) // at once, at the tail
		l = mustLease(t, g)
		require.Equal(t, []int{1}, l.Messages)
		require.Equal(t, 3, l.Attempt)
		g.Ack(l)
		l = mustLease(t, g)
		require.Equal(t, []int{2}, l.Messages)
		require.Equal(t, 1, l.Attempt, "a new head starts over")
		g.Ack(l)
	})
}

// TestGroupsRetryMockClock checks Retry delays follow the configured clock.
func TestGroupsRetryMockClock(t *testing.T) {
	mock := clock.NewMock()
	g, err := NewGroups[string, int](GroupsConfig{Clock: mock})
	require.NoError(t, err)
	defer g.Close(nil)
	require.NoError(t, g.Put("a", 1))
	start := mock.Now()
	g.Retry(mustLease(t, g), 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan Lease[string, int], 1)
	go func() {
		l, _ := g.Get(ctx)
		got <- l
	}()
	for len(got) == 0 {
		mock.Add(time.Second) // sleeps a millisecond of real time, so the timer goroutine runs
	}
	cancel()
	require.GreaterOrEqual(t, mock.Now().Sub(start), 5*time.Second)
	l := <-got
	require.Equal(t, 2, l.Attempt)
	g.Ack(l)
}

// TestGroupsRetryKeepsBatch checks that a retried or deferred lease comes
// back with exactly its own messages, whatever MaxBatch: messages put
// meanwhile wait behind it and get a lease, and attempts, of their own.
// Sharing the retried lease's count would drop a message that arrived
// during the last backoff after a single try.
func TestGroupsRetryKeepsBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, maxBatch := range []int{0, 1, 3} {
			g := newGroups[string, int](t, maxBatch)
			require.NoError(t, g.Put("a", 1))
			l := mustLease(t, g)
			g.Retry(l, time.Second)
			require.NoError(t, g.Put("a", 2))
			l = mustLease(t, g)
			require.Equal(t, []int{1}, l.Messages, "MaxBatch %d", maxBatch)
			require.Equal(t, 2, l.Attempt)
			g.Defer(l, 0)
			require.NoError(t, g.Put("a", 3))
			l = mustLease(t, g)
			require.Equal(t, []int{1}, l.Messages, "MaxBatch %d: deferred", maxBatch)
			require.Equal(t, 2, l.Attempt)
			g.Retry(l, 0)
			l = mustLease(t, g)
			require.Equal(t, 3, l.Attempt)
			require.True(t, g.Drop(l), "MaxBatch %d: attempts used up", maxBatch)
			l = mustLease(t, g)
			if maxBatch == 1 {
				require.Equal(t, []int{2}, l.Messages)
			} else {
				require.Equal(t, []int{2, 3}, l.Messages, "MaxBatch %d: put meanwhile", maxBatch)
			}
			require.Equal(t, 1, l.Attempt, "MaxBatch %d: a fresh start", maxBatch)
			g.Ack(l)
		}

		// A batch of two under MaxBatch 3 comes back as those two.
		g := newGroups[string, int](t, 3)
		require.NoError(t, g.Put("a", 1, 2))
		g.Retry(mustLease(t, g), time.Second)
		require.NoError(t, g.Put("a", 3, 4))
		l := mustLease(t, g)
		require.Equal(t, []int{1, 2}, l.Messages)
		require.Equal(t, 2, l.Attempt)
		require.True(t, g.Ack(l))
		l = mustLease(t, g)
		require.Equal(t, []int{3, 4}, l.Messages)
		require.Equal(t, 1, l.Attempt)
		g.Ack(l)
	})
}

// TestGroupsReleaseCoalesces checks that a released key starts over: with
// MaxBatch 0 its lease takes everything waiting, the held head and the
// messages put behind it, all at attempt 1.
func TestGroupsReleaseCoalesces(t *testing.T) {
	g := newGroups[string, int](t, 0)
	require.NoError(t, g.Put("a", 1))
	g.Retry(mustLease(t, g), 0)
	g.Hold(mustLease(t, g))
	require.NoError(t, g.Put("a", 2))
	require.True(t, g.Release("a"))
	l := mustLease(t, g)
	require.Equal(t, []int{1, 2}, l.Messages)
	require.Equal(t, 1, l.Attempt)
	g.Ack(l)
}

func TestGroupsDrop(t *testing.T) {
	g := newGroups[string, int](t, 1)
	require.NoError(t, g.Put("a", 1, 2))
	l := mustLease(t, g)
	g.Retry(l, 0)
	l = mustLease(t, g)
	require.Equal(t, 2, l.Attempt)
	g.Drop(l)
	l = mustLease(t, g)
	require.Equal(t, []int{2}, l.Messages)
	require.Equal(t, 1, l.Attempt)
}

func TestGroupsHoldRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		require.NoError(t, g.Put("a", 1, 2))
		require.NoError(t, g.Put("b", 10, 11))
		l := mustLease(t, g)
		g.Retry(l, 0)
		require.Equal(t, "b", mustLease(t, g).Key)
		l = mustLease(t, g)
		require.Equal(t, 2, l.Attempt)
		g.Hold(l)
		require.Equal(t, []string{"a"}, g.Held())
		require.NoError(t, g.Put("a", 3))
		require.Equal(t, 4, g.Len(), "a1, a2, a3 and b11")
		require.False(t, g.Release("b"), "b is leased, not held")
		require.False(t, g.Release("zz"))

		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		_, err := g.Get(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded, "a held key is out of rotation")

		require.True(t, g.Release("a"))
		require.False(t, g.Release("a"))
		require.Empty(t, g.Held())
		l = mustLease(t, g)
		require.Equal(t, Lease[string, int]{Key: "a", Messages: []int{1}, Attempt: 1, gr: l.gr, token: l.token}, l)
	})
}

func TestGroupsStaleLeasePanics(t *testing.T) {
	g := newGroups[string, int](t, 0)
	require.PanicsWithValue(t,
		"fifo: Groups.Ack of a lease that is not current (already ended, or not handed out by this Groups)",
		func() { g.Ack(Lease[string, int]{Key: "a"}) })
	require.NoError(t, g.Put("a", 1))
	l := mustLease(t, g)
	g.Retry(l, 0)
	require.Panics(t, func() { g.Ack(l) }, "retried lease")
	l2 := mustLease(t, g)
	require.Panics(t, func() { g.Drop(l) }, "earlier lease of the same key")
	g.Hold(l2)
	require.PanicsWithValue(t,
		"fifo: Groups.Hold of a lease that is not current (already ended, or not handed out by this Groups)",
		func() { g.Hold(l2) })
	require.Panics(t, func() { g.Retry(l2, 0) })
	require.Equal(t, 0, g.Leased())
}

func TestGroupsShutDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		blocked := make(chan Lease[string, int], 1)
		go func() { blocked <- mustLease(t, g) }()
		synctest.Wait()
		require.NoError(t, g.Put("a", 1))
		la := <-blocked
		require.Equal(t, "a", la.Key, "a blocked Get takes the first Put")
		require.NoError(t, g.Put("b", 10))
		require.NoError(t, g.Put("c", 20))
		g.Ack(mustLease(t, g))
		lc := mustLease(t, g)
		require.Equal(t, "c", lc.Key)
		start := time.Now()
		g.Retry(lc, time.Second)
		type result struct {
			l   Lease[string, int]
			err error
		}
		gets := make(chan result, 2)
		for range 2 {
			go func() {
				l, err := g.Get(context.Background())
				gets <- result{l, err}
			}()
		}
		synctest.Wait()

		g.ShutDown()
		g.ShutDown() // idempotent
		drained := make(chan error, 1)
		go func() { drained <- g.ShutDownWithDrain(context.Background()) }()
		synctest.Wait()
		require.ErrorIs(t, g.Put("d", 1), ErrClosed)
		require.Empty(t, gets, "blocked Gets wait for the pending retry")
		// The retry of c still comes due: one Get takes it, the other
		// returns as nothing is left ready or delayed.
		r1, r2 := <-gets, <-gets
		require.Equal(t, time.Second, time.Since(start))
		if r1.err != nil {
			r1, r2 = r2, r1
		}
		require.ErrorIs(t, r2.err, ErrClosed)
		require.NoError(t, r1.err)
		lc = r1.l
		require.Equal(t, Lease[string, int]{Key: "c", Messages: []int{20}, Attempt: 2, gr: lc.gr, token: lc.token}, lc)
		_, err := g.Get(context.Background())
		require.ErrorIs(t, err, ErrClosed, "nothing ready or delayed: a and c are leased")
		g.Hold(lc)
		require.Len(t, drained, 0, "a is still leased")
		g.Ack(la)
		require.NoError(t, <-drained, "held keys do not hold up the drain")
		require.Equal(t, []string{"c"}, g.Held())
	})
}

func TestGroupsShutDownWithDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		require.NoError(t, g.Put("a", 1, 2))
		require.NoError(t, g.Put("b", 10))
		require.NoError(t, g.Put("c", 20))
		la := mustLease(t, g)
		g.Ack(mustLease(t, g))
		lc := mustLease(t, g)
		require.Equal(t, "c", lc.Key)
		g.Retry(lc, time.Minute)

		drained := make(chan error, 1)
		go func() { drained <- g.ShutDownWithDrain(context.Background()) }()
		synctest.Wait()
		g.Ack(la)
		synctest.Wait()
		require.Len(t, drained, 0, "a has a message left, ready")
		la = mustLease(t, g)
		require.Equal(t, []int{2}, la.Messages)
		g.Ack(la)
		synctest.Wait()
		require.Len(t, drained, 0, "c is delayed")
		lc = mustLease(t, g)
		require.Equal(t, 2, lc.Attempt)
		g.Defer(lc, time.Second)
		synctest.Wait()
		require.Len(t, drained, 0, "c is deferred")
		lc = mustLease(t, g)
		require.Equal(t, 2, lc.Attempt, "Defer keeps the attempt")
		require.False(t, g.Ack(lc))
		require.NoError(t, <-drained)
		require.Zero(t, g.Keys())
		_, err := g.Get(context.Background())
		require.ErrorIs(t, err, ErrClosed)
	})
}

func TestGroupsShutDownWithDrainContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 0)
		require.NoError(t, g.Put("a", 1))
		l := mustLease(t, g)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		require.ErrorIs(t, g.ShutDownWithDrain(ctx), context.DeadlineExceeded)
		g.Ack(l)
		require.NoError(t, g.ShutDownWithDrain(context.Background()))
	})
}

// TestGroupsShutDownEndsDrain checks that ShutDown ends a pending
// ShutDownWithDrain at once, as for Queue, with leases out and a retry
// pending; those still flow afterwards, and a later ShutDownWithDrain
// waits for them.
func TestGroupsShutDownEndsDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		require.NoError(t, g.Put("a", 1))
		require.NoError(t, g.Put("b", 2))
		la := mustLease(t, g)
		g.Retry(mustLease(t, g), time.Minute)
		drained := make(chan error, 2)
		for range 2 {
			go func() { drained <- g.ShutDownWithDrain(context.Background()) }()
		}
		synctest.Wait()
		require.Empty(t, drained, "a is leased, b delayed")

		g.ShutDown()
		require.ErrorIs(t, <-drained, ErrClosed, "ShutDown cut the drain short")
		require.ErrorIs(t, <-drained, ErrClosed, "every pending drain")
		go func() { drained <- g.ShutDownWithDrain(context.Background()) }()
		synctest.Wait()
		require.False(t, g.Ack(la))
		lb := mustLease(t, g) // the retry still comes due
		require.Equal(t, 2, lb.Attempt)
		require.Empty(t, drained, "a later ShutDownWithDrain waits for b")
		require.False(t, g.Ack(lb))
		require.NoError(t, <-drained)
		g.ShutDown()
		require.NoError(t, g.ShutDownWithDrain(context.Background()), "drained already")
	})
}

// TestGroupsConcurrent runs producers and consumers at once, with random
// retries and drops, and checks that no key is leased twice at once, that
// messages of a key arrive in order, and that none is lost or ended twice.
func TestGroupsConcurrent(t *testing.T) {
	for _, maxBatch := range []int{0, 1, 3} {
		synctest.Test(t, func(t *testing.T) {
			testGroupsConcurrent(t, maxBatch)
		})
	}
}

func testGroupsConcurrent(t *testing.T, maxBatch int) {
	const keys, producers, consumers, perKey = 12, 3, 4, 200
	g := newGroups[int, int](t, maxBatch)
	var busy [keys]atomic.Bool
	var next [keys]int // next expected message; guarded by the key's lease
	var acked, overlaps, disorder atomic.Int64
	var pw, cw sync.WaitGroup
	for p := range producers {
		pw.Go(func() {
			for i := range perKey {
				for k := p; k < keys; k += producers {
					if err := g.Put(k, i); err != nil {
						panic(err)
					}
				}
			}
		})
	}
	for c := range consumers {
		cw.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 3))
			for {
				l, err := g.Get(context.Background())
				if err != nil {
					return
				}
				k := l.Key
				if !busy[k].CompareAndSwap(false, true) {
					overlaps.Add(1)
				}
				for i, m := range l.Messages {
					if m != next[k]+i {
						disorder.Add(1)
					}
				}
				if maxBatch > 0 && len(l.Messages) > maxBatch {
					disorder.Add(1)
				}
				busy[k].Store(false)
				switch rng.IntN(8) {
				case 0, 1:
					g.Retry(l, time.Duration(rng.IntN(3))*time.Millisecond)
				case 2:
					next[k] += len(l.Messages)
					acked.Add(int64(len(l.Messages)))
					g.Drop(l)
				default:
					next[k] += len(l.Messages)
					acked.Add(int64(len(l.Messages)))
					g.Ack(l)
				}
			}
		})
	}
	pw.Wait()
	require.NoError(t, g.ShutDownWithDrain(context.Background()), "pending retries are drained too")
	cw.Wait()
	require.Zero(t, g.Keys())
	require.Zero(t, overlaps.Load(), "a key was leased twice at once")
	require.Zero(t, disorder.Load(), "messages out of order")
	require.Equal(t, int64(keys*perKey), acked.Load())
	for k := range keys {
		require.Equal(t, perKey, next[k])
	}
}

// TestGroupsLeaseSliceIsolated checks that a caller appending to or
// keeping a lease's slice cannot disturb the messages behind it.
func TestGroupsLeaseSliceIsolated(t *testing.T) {
	g := newGroups[string, int](t, 1)
	require.NoError(t, g.Put("a", 1, 2, 3))
	l1 := mustLease(t, g)
	_ = append(l1.Messages, 99)
	g.Ack(l1)
	l2 := mustLease(t, g)
	require.Equal(t, []int{2}, l2.Messages)
	g.Ack(l2)
	require.NoError(t, g.Put("a", 4))
	l3 := mustLease(t, g)
	require.Equal(t, []int{3}, l3.Messages)
	require.Equal(t, []int{1}, l1.Messages, "an ended lease keeps its messages")
	g.Ack(l3)
}

func TestGroupsAckDropReportMore(t *testing.T) {
	g := newGroups[string, int](t, 1)
	require.NoError(t, g.Put("a", 1, 2, 3))
	require.True(t, g.Ack(mustLease(t, g)), "2 and 3 are left")
	l := mustLease(t, g)
	require.NoError(t, g.Put("b", 10))
	require.True(t, g.Drop(l), "3 is left")
	require.Equal(t, "b", mustLease(t, g).Key, "a went to the tail, behind b")
	l = mustLease(t, g)
	require.NoError(t, g.Put("a", 4))
	require.True(t, g.Ack(l), "4 was put during the lease")
	require.False(t, g.Ack(mustLease(t, g)))
}

func TestGroupsDefer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 0)
		start := time.Now()
		require.NoError(t, g.Put("a", 1))
		g.Retry(mustLease(t, g), 0)
		l := mustLease(t, g)
		require.Equal(t, 2, l.Attempt)
		g.Defer(l, time.Second)
		require.Equal(t, GroupsStats{Messages: 1, Waiting: 1, Keys: 1, Delayed: 1}, g.Stats())
		l = mustLease(t, g)
		require.Equal(t, time.Second, time.Since(start))
		require.Equal(t, 2, l.Attempt, "Defer does not count an attempt")
		g.Defer(l, 0)
		l = mustLease(t, g)
		require.Equal(t, 2, l.Attempt)
		require.PanicsWithValue(t,
			"fifo: Groups.Defer of a lease that is not current (already ended, or not handed out by this Groups)",
			func() { g.Defer(Lease[string, int]{Key: "a"}, 0) })
		g.Ack(l)
	})
}

func TestGroupsStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		require.NoError(t, g.Put("a", 1, 2))
		require.NoError(t, g.Put("b", 10))
		require.NoError(t, g.Put("c", 20, 21, 22))
		require.Equal(t, GroupsStats{Messages: 6, Waiting: 6, Keys: 3}, g.Stats())
		la := mustLease(t, g)
		require.Equal(t, GroupsStats{Messages: 6, Waiting: 5, Leases: 1, Keys: 3}, g.Stats())
		g.Hold(la)
		require.NoError(t, g.Put("a", 3))
		require.Equal(t, GroupsStats{Messages: 7, Waiting: 7, Keys: 3, Held: 1, HeldMessages: 3}, g.Stats())
		g.Retry(mustLease(t, g), time.Second)
		require.Equal(t, GroupsStats{Messages: 7, Waiting: 7, Keys: 3, Delayed: 1, Retrying: 1, Held: 1, HeldMessages: 3}, g.Stats())
		g.Ack(mustLease(t, g)) // c's head
		require.Equal(t, GroupsStats{Messages: 6, Waiting: 6, Keys: 3, Delayed: 1, Retrying: 1, Held: 1, HeldMessages: 3}, g.Stats())
		require.True(t, g.Release("a"))
		require.Equal(t, GroupsStats{Messages: 6, Waiting: 6, Keys: 3, Delayed: 1, Retrying: 1}, g.Stats())
		time.Sleep(time.Second)
		synctest.Wait()
		require.Equal(t, GroupsStats{Messages: 6, Waiting: 6, Keys: 3}, g.Stats())
	})
}

// TestGroupsStatsRetrying checks the counts of keys waiting for a retry
// delay and of the messages blocked behind them, which a deferred key does
// not add to.
func TestGroupsStatsRetrying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		require.NoError(t, g.Put("a", 1, 2, 3))
		require.NoError(t, g.Put("b", 10, 11))
		g.Retry(mustLease(t, g), time.Second)
		g.Defer(mustLease(t, g), time.Second)
		require.NoError(t, g.Put("a", 4))
		require.NoError(t, g.Put("b", 12))
		s := g.Stats()
		require.Equal(t, 2, s.Delayed)
		require.Equal(t, 1, s.Retrying, "b was deferred, not retried")
		require.Equal(t, 3, s.BehindRetrying, "2, 3 and 4 wait behind a's head")

		time.Sleep(time.Second)
		synctest.Wait()
		s = g.Stats()
		require.Zero(t, s.Retrying, "due again")
		require.Zero(t, s.BehindRetrying)
		l := mustLease(t, g)
		require.Equal(t, "a", l.Key)
		g.Retry(l, time.Hour)
		require.Equal(t, 3, g.Stats().BehindRetrying)
		g.Close(nil)
		require.Equal(t, GroupsStats{}, g.Stats())
	})
}

// TestGroupsClose checks that Close hands back ready, delayed and held
// messages in order, and the rest of a lease still out when it ends.
func TestGroupsClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGroups[string, int](t, 1)
		require.NoError(t, g.Put("ready", 1, 2))
		require.NoError(t, g.Put("delayed", 10, 11))
		require.NoError(t, g.Put("held", 20))
		require.NoError(t, g.Put("acked", 30, 31))
		require.NoError(t, g.Put("retried", 40, 41))
		require.Equal(t, "ready", mustLease(t, g).Key) // abandoned: must not come back
		g.Retry(mustLease(t, g), time.Hour)
		g.Hold(mustLease(t, g))
		require.NoError(t, g.Put("held", 21))
		lAcked := mustLease(t, g)
		lRetried := mustLease(t, g)
		require.NoError(t, g.Put("ready2", 50))
		require.Equal(t, "ready2", mustLease(t, g).Key)

		blocked := make(chan error, 1)
		go func() {
			_, err := g.Get(context.Background())
			blocked <- err
		}()
		g.ShutDown()
		synctest.Wait()
		require.Len(t, blocked, 0, "a retry is pending")

		left := map[string][]int{}
		g.Close(func(key string, msgs []int) {
			require.Len(t, msgs, 1, "batches of MaxBatch")
			left[key] = append(left[key], msgs...)
		})
		require.ErrorIs(t, <-blocked, ErrClosed)
		require.Equal(t, map[string][]int{"delayed": {10, 11}, "held": {20, 21}}, left)
		require.Equal(t, 3, g.Len(), "2, 31 and 41 wait behind leases")
		require.False(t, g.Ack(lAcked))
		g.Retry(lRetried, time.Second)
		require.Equal(t, map[string][]int{
			"delayed": {10, 11}, "held": {20, 21}, "acked": {31}, "retried": {40, 41},
		}, left)
		require.Equal(t, GroupsStats{Messages: 3, Waiting: 1, Leases: 2, Keys: 2}, g.Stats(), "ready and ready2 are still leased")
		_, err := g.Get(context.Background())
		require.ErrorIs(t, err, ErrClosed)
		require.ErrorIs(t, g.Put("x", 1), ErrClosed)
		require.Empty(t, g.Held())
		g.Close(func(string, []int) { t.Error("a second Close takes nothing back") })
	})
}

// TestGroupsCloseEndsDrainWhenLastLeaseEnds checks that a ShutDownWithDrain
// pending at Close returns once the last lease out ends, whichever way it
// ends: with messages behind it, or its own, handed back to Close's
// callback.
func TestGroupsCloseEndsDrainWhenLastLeaseEnds(t *testing.T) {
	ends := map[string]func(g *Groups[string, int], l Lease[string, int]){
		"Ack":   func(g *Groups[string, int], l Lease[string, int]) { g.Ack(l) },
		"Drop":  func(g *Groups[string, int], l Lease[string, int]) { g.Drop(l) },
		"Retry": func(g *Groups[string, int], l Lease[string, int]) { g.Retry(l, time.Second) },
		"Defer": func(g *Groups[string, int], l Lease[string, int]) { g.Defer(l, 0) },
		"Hold":  func(g *Groups[string, int], l Lease[string, int]) { g.Hold(l) },
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGroups[string, int](t, 1)
				require.NoError(t, g.Put("a", 1, 2))
				l := mustLease(t, g)

				drained := make(chan error, 1)
				go func() { drained <- g.ShutDownWithDrain(context.Background()) }()
				synctest.Wait()
				var left []int
				g.Close(func(_ string, msgs []int) { left = append(left, msgs...) })
				synctest.Wait()
				require.Len(t, drained, 0, "a lease is out")

				end(g, l)
				synctest.Wait()
				require.Len(t, drained, 1, "no lease is out any more")
				require.NoError(t, <-drained)
				require.Equal(t, GroupsStats{}, g.Stats())
				if name == "Ack" || name == "Drop" {
					require.Equal(t, []int{2}, left)
				} else {
					require.Equal(t, []int{1, 2}, left)
				}
			})
		})
	}
}

// TestGroupsForeignLeasePanics checks that a lease ends only in the Groups
// that handed it out: a lease of another Groups, with the same key and the
// same lease number, panics with each way of ending it and leaves this
// Groups' own lease untouched.
func TestGroupsForeignLeasePanics(t *testing.T) {
	ends := map[string]func(g *Groups[string, int], l Lease[string, int]){
		"Ack":   func(g *Groups[string, int], l Lease[string, int]) { g.Ack(l) },
		"Drop":  func(g *Groups[string, int], l Lease[string, int]) { g.Drop(l) },
		"Retry": func(g *Groups[string, int], l Lease[string, int]) { g.Retry(l, 0) },
		"Defer": func(g *Groups[string, int], l Lease[string, int]) { g.Defer(l, 0) },
		"Hold":  func(g *Groups[string, int], l Lease[string, int]) { g.Hold(l) },
	}
	for name, end := range ends {
		t.Run(name, func(t *testing.T) {
			mine, other := newGroups[string, int](t, 0), newGroups[string, int](t, 0)
			require.NoError(t, mine.Put("a", 1))
			require.NoError(t, other.Put("a", 2))
			l, foreign := mustLease(t, mine), mustLease(t, other)
			require.PanicsWithValue(t,
				"fifo: Groups."+name+" of a lease that is not current (already ended, or not handed out by this Groups)",
				func() { end(mine, foreign) })
			require.Equal(t, GroupsStats{Messages: 1, Leases: 1, Keys: 1}, mine.Stats())
			require.False(t, mine.Ack(l), "the own lease is still current")
			require.False(t, other.Ack(foreign))
		})
	}
}
