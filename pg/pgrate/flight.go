package pgrate

import (
	"context"
	"time"

	"github.com/pacerkit/pacer/internal/flight"
)

// The takes of one Bucket (or KeyLimiter) value share round trips once
// more than maxFlying come at the same time (see package internal/flight):
// a take alone runs the take statement, as it would without this; several
// go as one call of rate_takes (migration 002), which takes their events
// in the order they came, each as the take statement would. Every take of
// a bucket locks its one row, so takes in flight at once only queue for
// that lock on the server: a flight that carries them all costs one
// round trip, one lock and one write for several events.

// maxFlying is how many calls of one value fly at once before takes share
// them. One: a second in flight would only wait for the row's lock on the
// server; of 1, 2 and 4 with 8 callers, 1 did best (BENCHMARKS.md).
const maxFlying = 1

// takeServer is what flights need of the bucket: *remote.
type takeServer interface {
	server
	takes(ctx context.Context, most []time.Duration) ([]turn, error)
}

// flights is a server whose takes share round trips; its release and
// pauseFor are its remote's.
type flights struct {
	takeServer
	now   func() time.Time // the clock of the deadlines
	group flight.Group[takeRequest, turn]
}

// A takeRequest is one take: its ctx, whose deadline bounds its delay
// when its flight goes, and the longest delay it accepts (< 0: any).
type takeRequest struct {
	ctx  context.Context
	most time.Duration
}

func newFlights(srv takeServer, now func() time.Time) *flights {
	f := &flights{takeServer: srv, now: now}
	f.group = flight.Group[takeRequest, turn]{MaxFlying: maxFlying, One: f.one, Many: f.many}
	return f
}

// take implements server.
func (f *flights) take(ctx context.Context, most time.Duration) (turn, error) {
	return f.group.Do(ctx, takeRequest{ctx: ctx, most: most})
}

// one takes a take alone, with the take statement.
func (f *flights) one(ctx context.Context, r takeRequest) (turn, error) {
	return f.takeServer.take(ctx, r.most)
}

// many takes several with rate_takes. A take whose deadline passed while
// it waited for its flight is refused without asking; one whose deadline
// comes sooner than the delay it accepted accepts less.
func (f *flights) many(ctx context.Context, rs []takeRequest) ([]turn, error) {
	now := f.now()
	out := make([]turn, len(rs))
	most := make([]time.Duration, 0, len(rs))
	asked := make([]int, 0, len(rs))
	for i, r := range rs {
		m := r.most
		if dl, ok := r.ctx.Deadline(); ok && m != 0 {
			left := dl.Sub(now)
			if left < 0 {
				out[i].refused = true
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
