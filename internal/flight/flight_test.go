package flight

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// held is a server whose calls block until the test lets them land, so
// that the test decides which calls fly together. It answers request r of
// its call number n with 100·n + r.
type held struct {
	mu    sync.Mutex
	calls [][]int // the requests of each call, in the order they came
	land  chan struct{}
	err   error
}

func newHeld() *held { return &held{land: make(chan struct{})} }

func (h *held) group(maxFlying int) *Group[int, int] {
	return &Group[int, int]{
		MaxFlying: maxFlying,
		One: func(ctx context.Context, r int) (int, error) {
			res, err := h.many(ctx, []int{r})
			if err != nil {
				return 0, err
			}
			return res[0], nil
		},
		Many: h.many,
	}
}

func (h *held) many(ctx context.Context, rs []int) ([]int, error) {
	h.mu.Lock()
	h.calls = append(h.calls, rs)
	n := len(h.calls)
	h.mu.Unlock()
	<-h.land
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]int, len(rs))
	for i, r := range rs {
		out[i] = 100*n + r
	}
	return out, h.err
}

func (h *held) seen() [][]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]int(nil), h.calls...)
}

type result struct {
	res int
	err error
}

// goDo starts g.Do(ctx, r), waits until the bubble is idle, and returns
// the result's channel.
func goDo(ctx context.Context, g *Group[int, int], r int) <-chan result {
	done := make(chan result, 1)
	go func() {
		res, err := g.Do(ctx, r)
		done <- result{res, err}
	}()
	synctest.Wait()
	return done
}

// Up to MaxFlying calls fly at once, each alone; the calls that come
// meanwhile wait, and fly together in one call once one lands, in the
// order they came, each getting its own result; a call whose ctx ends
// while it waits leaves.
func TestCallsShareFlightsBeyondMaxFlying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHeld()
		g := h.group(2)
		ctx := context.Background()
		a, b := goDo(ctx, g, 1), goDo(ctx, g, 2)
		require.Equal(t, [][]int{{1}, {2}}, h.seen(), "two fly at once, alone")

		gone, leave := context.WithCancel(ctx)
		c := goDo(ctx, g, 3)
		d := goDo(gone, g, 4)
		e := goDo(ctx, g, 5)
		require.Len(t, h.seen(), 2, "the others wait for a place")
		require.Equal(t, 3, g.Waiting())
		leave()
		require.ErrorIs(t, (<-d).err, context.Canceled)
		require.Equal(t, 2, g.Waiting(), "the call whose ctx ended left")

		h.land <- struct{}{} // one of the two lands; c leads c and e
		synctest.Wait()
		require.Zero(t, g.Waiting())
		require.Equal(t, [][]int{{1}, {2}, {3, 5}}, h.seen())
		close(h.land)
		results := map[int]result{}
		for _, r := range []<-chan result{a, b} {
			got := <-r
			results[got.res%100] = got
		}
		require.ElementsMatch(t, []int{101, 202}, []int{results[1].res, results[2].res}, "each alone in its call")
		require.Equal(t, result{res: 303}, <-c)
		require.Equal(t, result{res: 305}, <-e)
	})
}

// A flight's call does not end with its leader's ctx: the others of the
// flight, and the leader, get their results.
func TestFlightOutlivesItsLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHeld()
		g := h.group(1)
		ctx := context.Background()
		first := goDo(ctx, g, 1)
		leaderCtx, cancelLeader := context.WithCancel(ctx)
		leader := goDo(leaderCtx, g, 2)
		other := goDo(ctx, g, 3)
		h.land <- struct{}{}
		synctest.Wait()
		require.Equal(t, [][]int{{1}, {2, 3}}, h.seen())
		cancelLeader()
		close(h.land)
		require.Equal(t, result{res: 101}, <-first)
		require.Equal(t, result{res: 202}, <-leader, "in the air, the leader gets its result too")
		require.Equal(t, result{res: 203}, <-other)
	})
}

// An error of a flight's call is the error of every one of its calls; a
// Many that returns too few results is an error too.
func TestFlightErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHeld()
		h.err = errors.New("connection refused")
		g := h.group(1)
		ctx := context.Background()
		all := []<-chan result{goDo(ctx, g, 1), goDo(ctx, g, 2), goDo(ctx, g, 3)}
		close(h.land)
		for _, r := range all {
			require.ErrorIs(t, (<-r).err, h.err)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		g := &Group[int, int]{
			MaxFlying: 1,
			One:       func(context.Context, int) (int, error) { <-release; return 0, nil },
			Many:      func(context.Context, []int) ([]int, error) { return []int{1}, nil },
		}
		ctx := context.Background()
		first := goDo(ctx, g, 1)
		b, c := goDo(ctx, g, 2), goDo(ctx, g, 3)
		close(release)
		require.NoError(t, (<-first).err)
		require.ErrorContains(t, (<-b).err, "1 results for 2 requests")
		require.ErrorContains(t, (<-c).err, "1 results for 2 requests")
	})
}

// A flight takes at most MaxSize calls; the rest wait for the next.
func TestFlightSizeBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHeld()
		g := h.group(1)
		ctx := context.Background()
		var all []<-chan result
		for i := range MaxSize + 6 {
			all = append(all, goDo(ctx, g, i))
		}
		close(h.land)
		for _, r := range all {
			require.NoError(t, (<-r).err)
		}
		calls := h.seen()
		require.Len(t, calls, 3)
		require.Len(t, calls[1], MaxSize)
		require.Len(t, calls[2], 5)
	})
}

// A call that flies alone costs the Group no allocation: callers that
// never share pay nothing for the chance to.
func TestCallAloneAllocatesNothing(t *testing.T) {
	g := &Group[int, int]{
		MaxFlying: 1,
		One:       func(_ context.Context, r int) (int, error) { return r, nil },
		Many:      func(context.Context, []int) ([]int, error) { panic("a call alone shared a flight") },
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		if res, err := g.Do(ctx, 7); res != 7 || err != nil {
			t.Fatalf("Do = %d, %v", res, err)
		}
	})
	require.Zero(t, allocs)
}
