package redisrate

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer/redis/internal/redistest"
)

// recordingServer is a takeServer that records the mosts of each call of
// takes and answers event i of it with delay 100 + i.
type recordingServer struct {
	server // take, release and pauseFor: unused
	calls  [][]int64
}

func (r *recordingServer) takes(_ context.Context, most []int64) ([]turn, error) {
	r.calls = append(r.calls, most)
	turns := make([]turn, len(most))
	for i := range turns {
		turns[i] = turn{delay: 100 + int64(i), tat: 1000 + int64(i)}
	}
	return turns, nil
}

// A flight of takes asks each for no turn past its deadline, counted when
// the flight goes, and refuses without asking one whose deadline passed
// while it waited; every take gets its own turn back.
func TestFlightOfTakesKeepsDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &recordingServer{}
		f := newFlights(srv, time.Now)
		at := func(d time.Duration) context.Context {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(d))
			t.Cleanup(cancel)
			return ctx
		}
		allow := takeRequest{ctx: at(time.Second), most: 0}
		soon := takeRequest{ctx: at(time.Second), most: 5_000_000}
		noDeadline := takeRequest{ctx: context.Background(), most: -1}
		passed := takeRequest{ctx: at(-time.Second), most: 5_000_000}
		later := takeRequest{ctx: at(time.Hour), most: 2_000_000}
		turns, err := f.many(context.Background(), []takeRequest{allow, soon, noDeadline, passed, later})
		require.NoError(t, err)
		require.Equal(t, [][]int64{{0, 1_000_000, -1, 2_000_000}}, srv.calls,
			"Allow asks for now; a deadline bounds the delay; the passed one is not asked")
		require.Equal(t, []turn{{100, 1000}, {101, 1001}, {102, 1002}, {delay: -1}, {103, 1003}}, turns)
	})
}

// takes.lua takes several events as take.lua would one after the other: a
// fresh bucket of Burst 3 at 10 per second gives three events now, then
// one every 100 ms; an event whose delay is beyond its most is refused
// and takes nothing; the tat it returns for each is 100 ms after the
// last's.
func TestTakesLikeTakeInTurn(t *testing.T) {
	c := redistest.Client(t)
	s, err := newShape("BucketConfig", 10, 3, "takes", "pacertest-"+t.Name(), false)
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
