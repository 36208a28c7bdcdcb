package sched

import (
	"sync"
	"time"

	"github.com/pacerkit/pacer/internal/timing"
)

// Loop is one goroutine with one timer. It calls run, which does whatever is
// due at now and returns the next deadline, then sleeps until that deadline,
// a Wake, or Stop; if the deadline has already passed, it calls run again at
// once. Owners call Wake when they push a deadline earlier than any before
// it; a spurious wake-up only costs one extra call of run.
type Loop struct {
	clk  timing.Clock
	run  func(now time.Time) (next time.Time, ok bool)
	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// Start starts the loop's goroutine. run is called on it, never concurrently
// with itself; ok=false means nothing is scheduled.
func Start(clk timing.Clock, run func(now time.Time) (next time.Time, ok bool)) *Loop {
	l := &Loop{
		clk:  clk,
		run:  run,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	go l.loop()
	return l
}

// Wake makes the loop call run again soon. It never blocks.
func (l *Loop) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Stop ends the loop and waits for its goroutine. It is idempotent. Stop
// must not be called from run.
func (l *Loop) Stop() {
	l.once.Do(func() { close(l.stop) })
	<-l.done
}

func (l *Loop) loop() {
	defer close(l.done)
	timer := l.clk.NewTimer(time.Hour)
	defer timer.Stop()
	armed := true
	for {
		now := l.clk.Now()
		next, ok := l.run(now)
		if armed {
			timer.Stop()
			armed = false
		}
		var fire <-chan time.Time
		if ok {
			// Measured after run, so time spent in run does not delay next.
			d := next.Sub(l.clk.Now())
			if d <= 0 {
				// Due already: run again now. A mock clock's timer would
				// not fire before the clock moves again.
				select {
				case <-l.stop:
					return
				default:
					continue
				}
			}
			timer.Reset(d)
			armed = true
			fire = timer.C()
		}
		select {
		case <-fire:
			armed = false
		case <-l.wake:
		case <-l.stop:
			return
		}
	}
}
