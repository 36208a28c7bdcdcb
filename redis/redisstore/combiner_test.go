package redisstore

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/store"
)

// sends records the batches a combiner sends, and holds the first until
// release is closed.
type sends struct {
	mu      sync.Mutex
	batches [][]string // the keys of each batch
	release chan struct{}
}

func (s *sends) send(batch []*finishCall) {
	s.mu.Lock()
	first := len(s.batches) == 0
	var keys []string
	for _, c := range batch {
		keys = append(keys, c.l.Key)
		c.more = true
	}
	s.batches = append(s.batches, keys)
	s.mu.Unlock()
	if first {
		<-s.release
	}
}

// call returns a new finishCall, not one from finishCalls: a done channel
// made outside a synctest bubble does not block durably inside it, and
// synctest.Wait would wait for it forever.
func call(ctx context.Context, key string, p store.ClaimParams) *finishCall {
	return &finishCall{ctx: ctx, l: store.Lease{Key: key}, p: p, done: make(chan struct{}, 1)}
}

// TestCombinerGathersWaitingCalls: calls that come while a script is on
// its way wait for it and then share the next, which one of them sends;
// calls whose claims differ go in separate scripts, and a call whose ctx
// ends before it is sent leaves, having changed nothing.
func TestCombinerGathersWaitingCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cb combiner
		s := &sends{release: make(chan struct{})}
		p1 := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute}
		p2 := store.ClaimParams{Keys: 1, MaxBatch: 2, TTL: time.Minute}
		ctx := context.Background()
		gone, leave := context.WithCancel(ctx)
		calls := []*finishCall{
			call(ctx, "a", p1),
			call(ctx, "b", p2),
			call(gone, "c", p1),
			call(ctx, "d", store.ClaimParams{}), // a Finish fits any claim
			call(ctx, "e", p2),
			call(ctx, "f", p1),
		}
		var wg sync.WaitGroup
		for _, c := range calls {
			wg.Go(func() { cb.do(c, s.send) })
			synctest.Wait() // a's script is on its way, the others wait in turn
		}
		leave()
		synctest.Wait()
		require.ErrorIs(t, calls[2].err, context.Canceled)
		close(s.release)
		wg.Wait()
		require.Equal(t, [][]string{{"a"}, {"b", "d", "e"}, {"f"}}, s.batches)
		for _, c := range calls {
			require.Equal(t, c != calls[2], c.more, "call %s", c.l.Key)
		}
	})
}

// TestCombinerYieldsBeforeSending: the call about to send a script lets
// the goroutines ready to run go first, and the call one of them makes
// goes in the same script. On one processor, the goroutine that runs
// first finds no script on its way, and the other, ready to run, comes
// while it yields. Now and then the scheduler takes a goroutine that
// yields back at once (it looks at its global queue first every 61st
// time, and the race detector shuffles), so most of 10 tries must do it;
// without the yield, none does.
func TestCombinerYieldsBeforeSending(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute}
	shared := 0
	for range 10 {
		var cb combiner
		s := &sends{release: make(chan struct{})}
		close(s.release)
		var wg sync.WaitGroup
		for _, key := range []string{"a", "b"} {
			wg.Go(func() { cb.do(call(t.Context(), key, p), s.send) })
		}
		wg.Wait()
		if len(s.batches) == 1 {
			require.ElementsMatch(t, []string{"a", "b"}, s.batches[0])
			shared++
		}
	}
	require.GreaterOrEqual(t, shared, 6, "tries in which both calls went in one script")
}

// TestCombinerHandsOnOnceResultsSeen: the calls that wait for a script
// are handed on once every call of the script back has seen its results,
// so that the next calls of those callers go in the next script. On one
// processor, b's caller calls again (d) right after b sees its results;
// c, waiting, sends only then, and takes d along. Handed on by a, the
// sender, c would run before b and send alone. As the scheduler now and
// then runs another goroutine than the one just woken (the race detector
// shuffles), most of 10 tries must do it.
func TestCombinerHandsOnOnceResultsSeen(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	shared := 0
	for range 10 {
		synctest.Test(t, func(t *testing.T) {
			var cb combiner
			var mu sync.Mutex
			var batches [][]string
			holds := []chan struct{}{make(chan struct{}), make(chan struct{})}
			send := func(batch []*finishCall) {
				mu.Lock()
				n := len(batches)
				var keys []string
				for _, c := range batch {
					keys = append(keys, c.l.Key)
				}
				batches = append(batches, keys)
				mu.Unlock()
				if n < len(holds) {
					<-holds[n]
				}
			}
			ctx := context.Background()
			p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute}
			var wg sync.WaitGroup
			wg.Go(func() { cb.do(call(ctx, "x", p), send) })
			synctest.Wait() // x's script is on its way
			wg.Go(func() { cb.do(call(ctx, "a", p), send) })
			synctest.Wait()
			wg.Go(func() {
				cb.do(call(ctx, "b", p), send)
				cb.do(call(ctx, "d", p), send)
			})
			synctest.Wait()
			close(holds[0]) // x is back; a sends a and b
			synctest.Wait()
			wg.Go(func() { cb.do(call(ctx, "c", p), send) })
			synctest.Wait()
			close(holds[1])
			wg.Wait()
			require.Equal(t, []string{"x"}, batches[0])
			require.Equal(t, []string{"a", "b"}, batches[1])
			if len(batches) == 3 {
				require.Equal(t, []string{"c", "d"}, batches[2])
				shared++
			}
		})
	}
	require.GreaterOrEqual(t, shared, 6, "tries in which c and d went in one script")
}

// TestSpread: each call of a script gets its outcome, and its share of
// the leases in the order the calls came; a lost lease gets
// store.ErrLeaseLost and no lease.
func TestSpread(t *testing.T) {
	p := store.ClaimParams{Keys: 2, TTL: time.Minute}
	calls := []*finishCall{call(t.Context(), "a", p), call(t.Context(), "b", p), call(t.Context(), "c", p), call(t.Context(), "d", store.ClaimParams{})}
	r := []any{int64(1), int64(-1), int64(0), int64(1), int64(0),
		"x", int64(7), int64(1), int64(1), "1:x1",
		"y", int64(8), int64(1), int64(1), "2:y1",
		"z", int64(9), int64(2), int64(1), "3:z1"}
	require.NoError(t, spread("q", calls, r))
	keys := func(c *finishCall) []string {
		var ks []string
		for _, l := range c.leases {
			ks = append(ks, l.Key)
		}
		return ks
	}
	require.True(t, calls[0].more)
	require.Equal(t, []string{"x", "y"}, keys(calls[0]))
	require.ErrorIs(t, calls[1].err, store.ErrLeaseLost)
	require.Empty(t, calls[1].leases)
	require.False(t, calls[2].more)
	require.Equal(t, []string{"z"}, keys(calls[2]))
	require.True(t, calls[3].more)
	require.Empty(t, calls[3].leases)
	require.Error(t, spread("q", calls, r[:3]), "short reply")
}

// A finishCall that ended goes back to finishCalls with nothing of its
// call: the next call that gets it finds its own arguments, no results,
// and its done signal not given.
func TestFinishCallFreed(t *testing.T) {
	p := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute}
	for range 10 {
		c := newFinishCall(t.Context(), store.Lease{Key: "a", Fence: 7}, store.Outcome{Kind: store.Retry, Err: "e"}, p)
		c.more, c.leases, c.next, c.err, c.lead = true, []store.Lease{{Key: "b"}}, time.Second, store.ErrLeaseLost, true
		c.signal()
		<-c.done
		c.free()
		d := newFinishCall(context.Background(), store.Lease{Key: "x"}, store.Outcome{Kind: store.Ack}, store.ClaimParams{})
		require.Equal(t, store.Lease{Key: "x"}, d.l)
		require.Equal(t, store.Outcome{Kind: store.Ack}, d.o)
		require.Zero(t, d.p)
		require.False(t, d.more)
		require.False(t, d.lead)
		require.Nil(t, d.leases)
		require.Zero(t, d.next)
		require.NoError(t, d.err)
		require.Equal(t, 1, cap(d.done))
		require.Zero(t, len(d.done))
		d.free()
	}
}

// TestCombinerKeepsKeyRatesApart: only calls whose KeyRates limit the
// same share a script (a Burst of 0 is one of 1, and a KeyRate with no
// Interval is none), as a script's claim keeps one KeyRate.
func TestCombinerKeepsKeyRatesApart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var cb combiner
		s := &sends{release: make(chan struct{})}
		off := store.ClaimParams{Keys: 1, MaxBatch: 1, TTL: time.Minute}
		offToo := off
		offToo.KeyRate = store.KeyRate{Burst: 5}
		on := off
		on.KeyRate = store.KeyRate{Interval: time.Millisecond, Burst: 1}
		onToo := off
		onToo.KeyRate = store.KeyRate{Interval: time.Millisecond}
		other := off
		other.KeyRate = store.KeyRate{Interval: time.Millisecond, Burst: 2}
		ctx := context.Background()
		calls := []*finishCall{
			call(ctx, "a", off),
			call(ctx, "b", on),
			call(ctx, "c", off),
			call(ctx, "d", other),
			call(ctx, "e", offToo),
			call(ctx, "f", onToo),
		}
		var wg sync.WaitGroup
		for _, c := range calls {
			wg.Go(func() { cb.do(c, s.send) })
			synctest.Wait()
		}
		close(s.release)
		wg.Wait()
		require.Equal(t, [][]string{{"a"}, {"b", "f"}, {"c", "e"}, {"d"}}, s.batches)
	})
}

// TestParseClaim: each lease of a claim's reply gets its own values, in
// a slice that appending to does not share with the next lease's, and a
// reply cut short or with a lease of no values is an error.
func TestParseClaim(t *testing.T) {
	r := []any{int64(5),
		"x", int64(7), int64(1), int64(2), "1:x1", "2:x2",
		"y", int64(8), int64(3), int64(1), "3:y1"}
	ls, next, err := parseClaim("q", r)
	require.NoError(t, err)
	require.Equal(t, 5*time.Microsecond, next)
	require.Equal(t, []store.Lease{
		{Queue: "q", Key: "x", Fence: 7, Attempt: 1, First: time.UnixMicro(1), Values: [][]byte{[]byte("x1"), []byte("x2")}},
		{Queue: "q", Key: "y", Fence: 8, Attempt: 3, First: time.UnixMicro(3), Values: [][]byte{[]byte("y1")}},
	}, ls)
	_ = append(ls[0].Values, []byte("mine"))
	require.Equal(t, [][]byte{[]byte("y1")}, ls[1].Values, "y's values after an append to x's")

	ls, next, err = parseClaim("q", r[:1])
	require.NoError(t, err)
	require.Empty(t, ls)
	require.Equal(t, 5*time.Microsecond, next)
	_, _, err = parseClaim("q", r[:5])
	require.ErrorContains(t, err, "lease of \"x\" with 2 values")
	_, _, err = parseClaim("q", r[:9])
	require.ErrorContains(t, err, "short reply")
	_, _, err = parseClaim("q", []any{int64(0), "z", int64(1), int64(1), int64(0)})
	require.ErrorContains(t, err, "lease of \"z\" with 0 values")
}
