// Package flight shares round trips between calls that come at the same
// time: up to MaxFlying calls fly at once, each alone; the calls that come
// while that many fly wait for one of them to land, and the first of them
// then leads them all in one call of Many, in the order they came. So a
// caller alone, or a few, cost what they would without a Group, and many
// at once make one round trip, and one run of a server's fixed costs, for
// several requests. A call that flies alone allocates nothing here.
//
// A call waits for one flight to land before its own (for more only when
// over MaxSize wait), as it would wait for a connection or the server
// anyway. A flight of several runs under
// its leader's ctx without the cancellation, until the latest deadline of
// its calls: a leader whose ctx ends does not fail the others. A call
// whose ctx ends while it waits leaves, with ctx.Err(); once in a flight,
// it gets the flight's result.
package flight

import (
	"context"
	"fmt"
	"sync"
)

// MaxSize bounds the calls of one flight.
const MaxSize = 64

// A Group shares the calls of one kind, to one server. Set its fields
// before the first Do; it is then safe for concurrent use.
type Group[Req, Res any] struct {
	// MaxFlying is how many calls fly at once before calls share them,
	// at least 1.
	MaxFlying int
	// One makes a call alone.
	One func(ctx context.Context, r Req) (Res, error)
	// Many makes one call for several requests and returns their results
	// in their order; an error is the error of every one of them.
	Many func(ctx context.Context, rs []Req) ([]Res, error)

	mu      sync.Mutex
	flying  int
	waiting []*call[Req, Res]
}

// A call is one Do waiting for its flight, or in one.
type call[Req, Res any] struct {
	ctx  context.Context
	req  Req
	lead bool          // set, under the mutex, before done says lead
	done chan struct{} // gets a token when its flight landed or it is to lead

	res Res // set by its flight before the token
	err error
}

// Do makes the call of r, alone or in a flight, and returns its result.
func (g *Group[Req, Res]) Do(ctx context.Context, r Req) (Res, error) {
	g.mu.Lock()
	if g.flying < g.MaxFlying {
		g.flying++
		g.mu.Unlock()
		return g.fly(ctx, r)
	}
	c := &call[Req, Res]{ctx: ctx, req: r, done: make(chan struct{}, 1)}
	g.waiting = append(g.waiting, c)
	g.mu.Unlock()
	select {
	case <-c.done:
	case <-ctx.Done():
		if g.leave(c) {
			var zero Res
			return zero, ctx.Err()
		}
		<-c.done
	}
	if c.lead { // written before the token
		return g.fly(ctx, r)
	}
	return c.res, c.err
}

// Waiting returns how many calls wait for a flight now.
func (g *Group[Req, Res]) Waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiting)
}

// leave takes c out of the waiting calls, unless a flight took it or it
// is to lead the next; it reports whether it did.
func (g *Group[Req, Res]) leave(c *call[Req, Res]) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, w := range g.waiting {
		if w == c {
			g.waiting = append(g.waiting[:i], g.waiting[i+1:]...)
			return true
		}
	}
	return false
}

// fly runs the flight that the call of r leads, with the calls waiting,
// then hands its place in the air to the first call that waits, gives
// each call of the flight its result, and returns the leader's.
func (g *Group[Req, Res]) fly(ctx context.Context, r Req) (res Res, err error) {
	g.mu.Lock()
	n := min(len(g.waiting), MaxSize-1)
	var others []*call[Req, Res]
	if n > 0 {
		others = append(make([]*call[Req, Res], 0, n), g.waiting[:n]...)
		g.waiting = append(g.waiting[:0], g.waiting[n:]...)
	}
	g.mu.Unlock()

	if len(others) == 0 {
		res, err = g.One(ctx, r)
	} else {
		res, err = g.send(ctx, r, others)
	}

	g.mu.Lock()
	if len(g.waiting) > 0 {
		next := g.waiting[0]
		g.waiting = append(g.waiting[:0], g.waiting[1:]...)
		next.lead = true
		next.done <- struct{}{}
	} else {
		g.flying--
	}
	g.mu.Unlock()
	for _, c := range others {
		c.done <- struct{}{}
	}
	return res, err
}

// send makes one call of Many for the leader's r and the others, sets
// the others' results and returns the leader's.
func (g *Group[Req, Res]) send(ctx context.Context, r Req, others []*call[Req, Res]) (Res, error) {
	ctx, cancel := flightContext(ctx, others)
	defer cancel()
	reqs := make([]Req, 0, 1+len(others))
	reqs = append(reqs, r)
	for _, c := range others {
		reqs = append(reqs, c.req)
	}
	res, err := g.Many(ctx, reqs)
	if err == nil && len(res) != len(reqs) {
		err = fmt.Errorf("flight: Many returned %d results for %d requests", len(res), len(reqs))
	}
	for i, c := range others {
		if err != nil {
			c.err = err
			continue
		}
		c.res = res[i+1]
	}
	if err != nil {
		var zero Res
		return zero, err
	}
	return res[0], nil
}

// flightContext returns the leader's ctx without its cancellation, ending
// at the latest deadline of the flight's calls, or never if one has none.
func flightContext[Req, Res any](leader context.Context, others []*call[Req, Res]) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(leader)
	last, ok := leader.Deadline()
	if !ok {
		return context.WithCancel(base)
	}
	for _, c := range others {
		dl, ok := c.ctx.Deadline()
		if !ok {
			return context.WithCancel(base)
		}
		if dl.After(last) {
			last = dl
		}
	}
	return context.WithDeadline(base, last)
}
