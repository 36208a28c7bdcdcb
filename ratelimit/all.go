package ratelimit

import (
	"context"
	"time"

	"golang.org/x/time/rate"
)

// All returns a Limiter that lets an event through only when every one of
// limiters does, for example a per-account limit AND a global one:
//
//	lim := ratelimit.All(perAccount.For(account), global)
//
// No limiter's token is held while waiting for another. Wait loops:
//
//  1. Reserve one token from every limiter, each on its own clock.
//  2. If all are due now, the event passes.
//  3. Otherwise give back every token except the one that is due last (the
//     bottleneck's), and wait for that one. The wait keeps a place in the
//     bottleneck's queue, so callers of All are not starved by callers that
//     wait on the bottleneck directly.
//  4. Reserve from the others again; if one of them now delays, give back
//     the bottleneck's token too and go on from step 3 with the new
//     bottleneck.
//
// A token given back after someone else reserved behind it is lost, which
// can make the combination slower under contention, never faster than any
// member allows. Wait fails early when ctx's deadline comes before the
// bottleneck's token, and returns ctx.Err() when ctx ends, holding nothing.
//
// Limiters made by this package (Bucket, Keyed.For) take part in this
// protocol. Any other Limiter is waited on first, in order, before the
// others are tried, so it holds its token while they wait; pass at most one
// such limiter. Nil limiters are ignored.
//
// The result is safe for concurrent use if its members are. It is not a
// Pauser: pause the member a Retry-After is about.
func All(limiters ...Limiter) Limiter {
	var a all
	for _, l := range limiters {
		switch l := l.(type) {
		case nil:
		case reserver:
			a.res = append(a.res, l)
		default:
			a.plain = append(a.plain, l)
		}
	}
	return a
}

// reserver is a Limiter that All can drive without blocking.
type reserver interface {
	Limiter
	// reserveOne takes a token for one event, now on the limiter's clock,
	// or while paused takes nothing and is due at the pause's end.
	reserveOne() (ticket, error)
	// awaitOne sleeps until t is due, reserving again if a pause voided it,
	// like Wait; on error nothing is held.
	awaitOne(ctx context.Context, t ticket) (ticket, error)
	// cancelOne gives t's token back if it can.
	cancelOne(t ticket)
}

// ticket is a reservation of one event on a reserver.
type ticket struct {
	delay time.Duration // from when it was taken until it is due
	held  bool          // it holds a token; false while paused

	lim *rate.Limiter // Bucket
	r   *rate.Reservation
	at  time.Time // when r is due
	key keyTicket // KeyLimiter
}

func (t ticket) due() bool { return t.held && t.delay <= 0 }

type all struct {
	res   []reserver
	plain []Limiter
}

// Wait waits until every limiter lets one event through; see All.
func (a all) Wait(ctx context.Context) error {
	for _, l := range a.plain {
		if err := l.Wait(ctx); err != nil {
			return err
		}
	}
	tickets := make([]ticket, len(a.res))
	held := -1 // index of a due token kept from the last round
	for {
		if err := ctx.Err(); err != nil {
			if held >= 0 {
				a.res[held].cancelOne(tickets[held])
			}
			return err
		}
		worst := -1
		for i, l := range a.res {
			if i == held {
				continue
			}
			t, err := l.reserveOne()
			if err != nil {
				for j := range a.res {
					if j < i || j == held {
						a.res[j].cancelOne(tickets[j])
					}
				}
				return err
			}
			tickets[i] = t
			if !t.due() && (worst < 0 || t.delay > tickets[worst].delay) {
				worst = i
			}
		}
		if worst < 0 {
			return nil
		}
		for i, l := range a.res {
			if i != worst {
				l.cancelOne(tickets[i])
			}
		}
		t, err := a.res[worst].awaitOne(ctx, tickets[worst])
		if err != nil {
			return err
		}
		t.delay = 0
		tickets[worst], held = t, worst
	}
}
