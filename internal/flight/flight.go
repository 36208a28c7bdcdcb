// Package flight shares round trips between calls that come at the same
// time: up to MaxFlying calls fly at once, each alone; the calls that come
// while that many fly wait for one of them to land, and the first of them
// then leads them all in one call of Many, in the order they came. So a
// caller alone, or a few, cost what they would without a Group, and many
// at once make one round trip, and one run of a server's fixed costs, for
// several requests.
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
	"time"
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
	c := &call[Req, Res]{ctx: ctx, req: r, done: make(chan struct{}, 1)}
	g.mu.Lock()
	lead := g.flying < g.MaxFlying
	if lead {
		g.flying++
	} else {
		g.waiting = append(g.waiting, c)
	}
	g.mu.Unlock()
	if !lead {
		select {
		case <-c.done:
		case <-ctx.Done():
			if g.leave(c) {
				var zero Res
				return zero, ctx.Err()
			}
			<-c.done
		}
		lead = c.lead // written before the token
	}
	if lead {
		g.fly(c)
	}
	return c.res, c.err
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

// fly runs the flight that leader leads, with the calls waiting, then
// hands its place in the air to the first call that waits, and gives each
// call of the flight its result.
func (g *Group[Req, Res]) fly(leader *call[Req, Res]) {
	g.mu.Lock()
	n := min(len(g.waiting), MaxSize-1)
	flight := append(make([]*call[Req, Res], 0, n+1), leader)
	flight = append(flight, g.waiting[:n]...)
	g.waiting = append(g.waiting[:0], g.waiting[n:]...)
	g.mu.Unlock()

	g.send(flight)

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
	for _, c := range flight[1:] {
		c.done <- struct{}{}
	}
}

// send makes the call of flight: One for one, Many for several.
func (g *Group[Req, Res]) send(flight []*call[Req, Res]) {
	if len(flight) == 1 {
		c := flight[0]
		c.res, c.err = g.One(c.ctx, c.req)
		return
	}
	ctx, cancel := flightContext(flight)
	defer cancel()
	reqs := make([]Req, len(flight))
	for i, c := range flight {
		reqs[i] = c.req
	}
	res, err := g.Many(ctx, reqs)
	if err == nil && len(res) != len(reqs) {
		err = fmt.Errorf("flight: Many returned %d results for %d requests", len(res), len(reqs))
	}
	for i, c := range flight {
		if err != nil {
			c.err = err
			continue
		}
		c.res = res[i]
	}
}

// flightContext returns the leader's ctx without its cancellation, ending
// at the latest deadline of the flight's calls, or never if one has none.
func flightContext[Req, Res any](flight []*call[Req, Res]) (context.Context, context.CancelFunc) {
	base := context.WithoutCancel(flight[0].ctx)
	var last time.Time
	for _, c := range flight {
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
