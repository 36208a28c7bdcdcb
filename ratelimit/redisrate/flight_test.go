package redisrate

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/internal/enginetest"
)

// heldServer is a takeServer whose calls block until the test lets them
// answer, so that the test decides which takes fly together. Each answer
// is a turn whose delay is 100 times the call's number plus the event's
// index in it, so every event's turn is told apart.
type heldServer struct {
	server // release and pauseFor: unused

	mu    sync.Mutex
	calls [][]int64 // the mosts of each call, in the order they came
	ctxs  []context.Context
	land  chan struct{}
	err   error
}

func newHeldServer() *heldServer { return &heldServer{land: make(chan struct{})} }

func (h *heldServer) take(ctx context.Context, most int64) (int64, int64, error) {
	t, err := h.takes(ctx, []int64{most})
	if err != nil {
		return 0, 0, err
	}
	return t[0].delay, t[0].tat, nil
}

func (h *heldServer) takes(ctx context.Context, most []int64) ([]turn, error) {
	h.mu.Lock()
	h.calls = append(h.calls, most)
	h.ctxs = append(h.ctxs, ctx)
	n := int64(len(h.calls))
	h.mu.Unlock()
	<-h.land
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	turns := make([]turn, len(most))
	for i := range turns {
		turns[i] = turn{delay: 100*n + int64(i), tat: 1000*n + int64(i)}
	}
	return turns, h.err
}

func (h *heldServer) seen() [][]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]int64(nil), h.calls...)
}

type takeResult struct {
	delay int64
	err   error
}

// goTake starts f.take(ctx, most) and returns its result's channel.
func goTake(ctx context.Context, f *flights, most int64) <-chan takeResult {
	done := make(chan takeResult, 1)
	go func() {
		d, _, err := f.take(ctx, most)
		done <- takeResult{d, err}
	}()
	return done
}

// Up to maxFlying takes fly alone at once; the takes that come meanwhile
// wait, and then fly together in one call, in the order they came, each
// with its own turn; a take whose ctx ends while it waits leaves, and a
// take with a deadline asks for no turn past it, counted when it flies.
func TestFlightsShareCallsBeyondMaxFlying(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHeldServer()
		f := newFlights(h, time.Now)
		ctx := context.Background()
		var alone []<-chan takeResult
		for i := range maxFlying {
			alone = append(alone, goTake(ctx, f, int64(i)))
			synctest.Wait()
		}
		require.Len(t, h.seen(), maxFlying, "the first ones fly alone, at once")

		gone, leave := context.WithCancel(ctx)
		soon, cancelSoon := context.WithTimeout(ctx, 3*time.Second)
		defer cancelSoon()
		first := goTake(ctx, f, 10)
		synctest.Wait()
		left := goTake(gone, f, 11)
		synctest.Wait()
		near := goTake(soon, f, 5_000_000) // 5 s, but its deadline is in 3 s
		synctest.Wait()
		last := goTake(ctx, f, -1)
		synctest.Wait()
		require.Len(t, h.seen(), maxFlying, "the others wait for a place")
		leave()
		require.ErrorIs(t, (<-left).err, context.Canceled)

		time.Sleep(2 * time.Second) // near's deadline is 1 s away
		h.land <- struct{}{}        // one of the first lands; first leads
		synctest.Wait()
		calls := h.seen()
		require.Len(t, calls, maxFlying+1)
		require.Equal(t, []int64{10, 1_000_000, -1}, calls[maxFlying], "one call, in the order they came, without the one that left")

		close(h.land)
		n := int64(maxFlying + 1)
		require.Equal(t, takeResult{delay: 100 * n}, <-first)
		require.Equal(t, takeResult{delay: 100*n + 1}, <-near)
		require.Equal(t, takeResult{delay: 100*n + 2}, <-last)
		for i, done := range alone {
			r := <-done
			require.NoError(t, r.err, i)
			require.Equal(t, int64(100*(i+1)), r.delay, "each alone, in its own call")
		}
	})
}

// A flight's call does not end with its leader's ctx: the others of the
// flight get their turns.
func TestFlightOutlivesItsLeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHeldServer()
		f := newFlights(h, time.Now)
		ctx := context.Background()
		var alone []<-chan takeResult
		for range maxFlying {
			alone = append(alone, goTake(ctx, f, 0))
		}
		synctest.Wait()
		leaderCtx, cancelLeader := context.WithCancel(ctx)
		leader := goTake(leaderCtx, f, 0)
		synctest.Wait()
		other := goTake(ctx, f, 0)
		synctest.Wait()
		h.land <- struct{}{}
		synctest.Wait()
		require.Len(t, h.seen(), maxFlying+1, "leader and other fly together")
		cancelLeader()
		close(h.land)
		require.NoError(t, (<-leader).err, "in the air, the leader gets its turn too")
		require.NoError(t, (<-other).err)
		for _, done := range alone {
			require.NoError(t, (<-done).err)
		}
	})
}

// An error of the flight's call is every one of its takes' error.
func TestFlightErrorReachesEveryTake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHeldServer()
		h.err = errors.New("connection refused")
		f := newFlights(h, time.Now)
		ctx := context.Background()
		var all []<-chan takeResult
		for range maxFlying + 3 {
			all = append(all, goTake(ctx, f, 0))
			synctest.Wait()
		}
		h.land <- struct{}{} // one lands, and the three waiting fly together
		synctest.Wait()
		require.Len(t, h.seen(), maxFlying+1)
		close(h.land)
		for _, done := range all {
			require.ErrorIs(t, (<-done).err, h.err)
		}
	})
}

// takes.lua takes several events as take.lua would one after the other: a
// fresh bucket of Burst 3 at 10 per second gives three events now, then
// one every 100 ms; an event whose delay is beyond its most is refused
// and takes nothing; the tat it returns for each is 100 ms after the
// last's.
func TestTakesLikeTakeInTurn(t *testing.T) {
	opt, err := redis.ParseURL(enginetest.RedisURL())
	require.NoError(t, err, "PACER_REDIS_URL")
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(t.Context()).Err(); err != nil {
		enginetest.Missing(t, "redisrate: no Redis: "+err.Error())
	}
	s, err := newShape("Config", 10, 3, "takes", "pacertest-"+t.Name(), false)
	require.NoError(t, err)
	r := newRemote(c, s, s.tag+"tat", s.tag+"pause", false)
	t.Cleanup(func() { _ = c.Del(context.Background(), r.tat, r.pause).Err() })
	turns, err := r.takes(t.Context(), []int64{-1, 0, -1, -1, 150_000, -1})
	require.NoError(t, err)
	const interval = 100_000
	require.Equal(t, int64(0), turns[0].delay)
	require.Equal(t, int64(0), turns[1].delay)
	require.Equal(t, int64(0), turns[2].delay)
	require.InDelta(t, interval, turns[3].delay, 2_000, "the fourth waits one interval (less the time the call took)")
	require.Equal(t, turn{delay: -1}, turns[4], "its delay, two intervals, is beyond its most")
	require.InDelta(t, 2*interval, turns[5].delay, 2_000)
	for i := 1; i < len(turns); i++ {
		if i == 4 || i == 5 {
			continue
		}
		require.Equal(t, int64(interval), turns[i].tat-turns[i-1].tat, i)
	}
	require.Equal(t, int64(interval), turns[5].tat-turns[3].tat, "the refused one took nothing")
	stored, err := c.Get(t.Context(), r.tat).Int64()
	require.NoError(t, err)
	require.Equal(t, turns[5].tat, stored, "the bucket keeps the last event's tat")
}
