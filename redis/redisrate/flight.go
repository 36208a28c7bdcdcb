package redisrate

import (
	"context"
	"time"

	"github.com/pacerkit/pacer/internal/flight"
)

// The takes of one Bucket (or KeyLimiter) value share function calls
// once more than maxFlying come at the same time (see package
// internal/flight): a take alone goes as take.lua, as it would without
// this; several go as one call of takes.lua, which takes their events in
// the order they came, each as take.lua would. So many callers at once
// make one round trip for several events, and the server runs the
// function's fixed part (its call, TIME, the read and the write of the
// bucket) once for them: what a shared bucket's busy users, a Transport
// under load, say, run into (see the package doc's figures).

// maxFlying is how many calls of one value fly at once before takes share
// them. On a 2-core machine with 8 callers, 4 did best of 1 to 6.
const maxFlying = 4

// takeServer is what flights need of the bucket in Redis: *remote.
type takeServer interface {
	server
	takes(ctx context.Context, most []int64) ([]turn, error)
}

// flights is a server whose takes share function calls; its release and
// pauseFor are its remote's.
type flights struct {
	takeServer
	now   func() time.Time // the clock of the deadlines
	group flight.Group[takeRequest, turn]
}

// A takeRequest is one take: its ctx, whose deadline bounds its delay
// when its flight goes, and the longest delay it accepts.
type takeRequest struct {
	ctx  context.Context
	most int64
}

func newFlights(srv takeServer, now func() time.Time) *flights {
	f := &flights{takeServer: srv, now: now}
	f.group = flight.Group[takeRequest, turn]{MaxFlying: maxFlying, One: f.one, Many: f.many}
	return f
}

// take implements server.
func (f *flights) take(ctx context.Context, most int64) (delay, tat int64, err error) {
	t, err := f.group.Do(ctx, takeRequest{ctx: ctx, most: most})
	return t.delay, t.tat, err
}

// one takes a take alone, with take.lua.
func (f *flights) one(ctx context.Context, r takeRequest) (turn, error) {
	delay, tat, err := f.takeServer.take(ctx, r.most)
	return turn{delay: delay, tat: tat}, err
}

// many takes several with takes.lua. A take whose deadline passed while
// it waited for its flight is refused without asking; one whose deadline
// comes sooner than the delay it accepted accepts less.
func (f *flights) many(ctx context.Context, rs []takeRequest) ([]turn, error) {
	now := f.now()
	out := make([]turn, len(rs))
	most := make([]int64, 0, len(rs))
	asked := make([]int, 0, len(rs))
	for i, r := range rs {
		m := r.most
		if dl, ok := r.ctx.Deadline(); ok && m != 0 {
			left := dl.Sub(now)
			if left < 0 {
				out[i].delay = -1
				continue
			}
			if m < 0 || microsDown(left) < m {
				m = microsDown(left)
			}
		}
		most, asked = append(most, m), append(asked, i)
	}
	if len(asked) == 0 {
		return out, nil
	}
	turns, err := f.takeServer.takes(ctx, most)
	if err != nil {
		return nil, err
	}
	for j, i := range asked {
		out[i] = turns[j]
	}
	return out, nil
}
