package main

import "time"

// gcra is the fake API's rate check, the generic cell rate algorithm: a
// request is on time when it comes no earlier than its theoretical arrival
// time (tat) minus the burst tolerance. A client pacing itself with a token
// bucket of the same rate and burst always passes; slack absorbs the jitter
// between the client's send and the server's receive.
type gcra struct {
	interval  time.Duration // 1 / rate
	tolerance time.Duration // (burst-1) * interval + slack
	tat       time.Time
}

const gcraSlack = 200 * time.Millisecond // how much earlier than its slot a request may arrive

func newGCRA(rate float64, burst int, slack time.Duration, now time.Time) gcra {
	interval := time.Duration(float64(time.Second) / rate)
	return gcra{interval: interval, tolerance: time.Duration(burst-1)*interval + slack, tat: now}
}

// drain spends the whole budget and one request more, as of now.
func (g *gcra) drain(now time.Time) {
	g.tat = now.Add(g.tolerance + g.interval)
}

// allow admits a request arriving at now, or says how long until it would
// be admitted. A refused request does not use up budget.
func (g *gcra) allow(now time.Time) (ok bool, wait time.Duration) {
	tat := g.tat
	if tat.Before(now) {
		tat = now
	}
	if at := tat.Add(-g.tolerance); now.Before(at) {
		return false, at.Sub(now)
	}
	g.tat = tat.Add(g.interval)
	return true, 0
}
