package redisrate

import (
	"context"
	"sync"
	"time"
)

// The takes of one Limiter (or KeyLimiter) value share function calls
// once more of them come at the same time than maxFlying: up to then,
// each take goes at once, alone, as take.lua, as it would without this;
// the takes that come while maxFlying calls fly wait for one of them to
// land, and the first of them then leads them all in one call of
// takes.lua, which takes their events in the order they came. So a
// caller alone, or a few, cost what they did, and many callers at once
// make one round trip for several events, and the server runs the
// function's fixed part (its call, TIME, the read and the write of the
// bucket) once for them: what a shared bucket's busy users, a Transport
// under load, say, run into (see the package doc's figures).
//
// A take waits for at most one flight before its own, as it would wait
// for a connection or the server anyway. A flight's call runs under its
// leader's ctx without the cancellation, until the latest deadline of
// its takes: a leader whose ctx ends does not fail the others.

// maxFlight bounds the events of one flight.
const maxFlight = 64

// maxFlying is how many calls of one value fly at once before takes
// share them. On a 2-core machine with 8 callers, 4 did best of 1 to 6.
const maxFlying = 4

// takeServer is what flights need of the bucket in Redis: *remote.
type takeServer interface {
	server
	takes(ctx context.Context, most []int64) ([]turn, error)
}

// flights is a server whose takes share function calls (see above); its
// release and pauseFor are its remote's.
type flights struct {
	takeServer
	now func() time.Time // the clock of the deadlines

	mu      sync.Mutex
	flying  int
	waiting []*pendingTake
}

// A pendingTake is one take waiting for its flight, or in one.
type pendingTake struct {
	ctx  context.Context
	most int64
	lead bool          // set, under the mutex, before done says lead
	done chan struct{} // gets a token when its flight landed or it is to lead

	turn turn // set by its flight before the token
	err  error
}

func newFlights(srv takeServer, now func() time.Time) *flights {
	return &flights{takeServer: srv, now: now}
}

// take implements server.
func (f *flights) take(ctx context.Context, most int64) (delay, tat int64, err error) {
	p := &pendingTake{ctx: ctx, most: most, done: make(chan struct{}, 1)}
	f.mu.Lock()
	lead := f.flying < maxFlying
	if lead {
		f.flying++
	} else {
		f.waiting = append(f.waiting, p)
	}
	f.mu.Unlock()
	if !lead {
		select {
		case <-p.done:
		case <-ctx.Done():
			if f.leave(p) {
				return 0, 0, ctx.Err()
			}
			<-p.done
		}
		lead = p.lead // written before the token
	}
	if lead {
		f.fly(p)
	}
	return p.turn.delay, p.turn.tat, p.err
}

// leave takes p out of the waiting takes, unless a flight took it or it
// is to lead the next; it reports whether it did.
func (f *flights) leave(p *pendingTake) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, w := range f.waiting {
		if w == p {
			f.waiting = append(f.waiting[:i], f.waiting[i+1:]...)
			return true
		}
	}
	return false
}

// fly runs the flight that leader leads, with the takes waiting, then
// hands its place in the air to the first take that waits, and gives
// each take of the flight its turn.
func (f *flights) fly(leader *pendingTake) {
	f.mu.Lock()
	n := min(len(f.waiting), maxFlight-1)
	flight := append(make([]*pendingTake, 0, n+1), leader)
	flight = append(flight, f.waiting[:n]...)
	f.waiting = append(f.waiting[:0], f.waiting[n:]...)
	f.mu.Unlock()

	f.send(flight)

	f.mu.Lock()
	if len(f.waiting) > 0 {
		next := f.waiting[0]
		f.waiting = append(f.waiting[:0], f.waiting[1:]...)
		next.lead = true
		next.done <- struct{}{}
	} else {
		f.flying--
	}
	f.mu.Unlock()
	for _, p := range flight[1:] {
		p.done <- struct{}{}
	}
}

// send takes the events of flight: alone with take.lua, together with
// takes.lua. A take whose deadline passed while it waited is refused
// without asking.
func (f *flights) send(flight []*pendingTake) {
	if len(flight) == 1 {
		p := flight[0]
		p.turn.delay, p.turn.tat, p.err = f.takeServer.take(p.ctx, p.most)
		return
	}
	ctx, cancel := flightContext(flight)
	defer cancel()
	now := f.now()
	most := make([]int64, 0, len(flight))
	asked := make([]*pendingTake, 0, len(flight))
	for _, p := range flight {
		m := p.most
		if dl, ok := p.ctx.Deadline(); ok && m != 0 {
			left := dl.Sub(now)
			if left < 0 {
				p.turn.delay = -1
				continue
			}
			if m < 0 || microsDown(left) < m {
				m = microsDown(left)
			}
		}
		most, asked = append(most, m), append(asked, p)
	}
	if len(asked) == 0 {
		return
	}
	turns, err := f.takeServer.takes(ctx, most)
	for i, p := range asked {
		if err != nil {
			p.err = err
			continue
		}
		p.turn = turns[i]
	}
}

// flightContext returns the leader's ctx without its cancellation,
// ending at the latest deadline of the flight's takes, or never if one
// has none.
func flightContext(flight []*pendingTake) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(flight[0].ctx)
	var last time.Time
	for _, p := range flight {
		dl, ok := p.ctx.Deadline()
		if !ok {
			return context.WithCancel(base)
		}
		if dl.After(last) {
			last = dl
		}
	}
	return context.WithDeadline(base, last)
}
