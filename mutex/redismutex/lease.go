package redismutex

import (
	"sync"
	"time"
)

// leaseOwner is what a lease renews and gives up: a Lock.
type leaseOwner interface {
	// renew extends the lock in Redis, giving up at deadline: true if it
	// is still the owner's, false if not, or an error if Redis did not
	// say.
	renew(deadline time.Time) (bool, error)
	// lose tells the owner that the lock is lost. It is called at most
	// once, with the lease's mutex held: it must not block.
	lose()
}

// A lease keeps a held lock alive and says when it is lost. It renews the
// lock every TTL/3, by one timer, whose callback runs each renewal on a
// goroutine of the timer's own: a held lock costs no goroutine between
// renewals.
//
// The lock is lost when a renewal finds it is no longer the owner's, or
// when no renewal succeeded for TTL minus a margin, measured on the local
// clock from when the last successful call (the acquisition, then each
// renewal) was sent: Redis started the TTL later than that, so the owner
// gives up before Redis lets another take the lock, by at least the
// margin. A renewal that fails with an error is tried again every TTL/10
// until then; one that has not answered by then is given up.
type lease struct {
	owner leaseOwner
	tasks *tasks // the Locker's: no renewal starts after Close
	every time.Duration
	retry time.Duration
	life  time.Duration // how long the lock is surely held after a call succeeded, TTL minus the margin

	mu       sync.Mutex
	timer    *time.Timer
	deadline time.Time // when the lock is lost, unless a renewal succeeds first
	renewing bool      // a renewal is in flight
	over     bool      // stopped or lost: nothing more to do
	lost     bool
}

// margin is how long before Redis could expire a lock its holder gives it
// up; see the package doc.
func margin(ttl time.Duration) time.Duration { return ttl / 10 }

// start starts renewing the lease of a lock acquired by a call sent at
// sent.
func (l *lease) start(owner leaseOwner, tasks *tasks, ttl time.Duration, sent time.Time) {
	l.mu.Lock() // the timer may fire before it is stored
	defer l.mu.Unlock()
	l.owner, l.tasks = owner, tasks
	l.every, l.retry, l.life = ttl/3, margin(ttl), ttl-margin(ttl)
	l.deadline = sent.Add(l.life)
	l.timer = time.AfterFunc(l.every, l.tick)
}

// tick is the timer's callback: it renews the lock, or gives it up once
// its deadline passed. While a renewal is in flight the timer is set for
// the deadline.
func (l *lease) tick() {
	l.mu.Lock()
	if l.over {
		l.mu.Unlock()
		return
	}
	left := time.Until(l.deadline)
	if left <= 0 {
		l.loseLocked()
		l.mu.Unlock()
		return
	}
	if l.renewing { // it sets the timer again when it answers
		l.mu.Unlock()
		return
	}
	if !l.tasks.start() { // closed: Close cancelled the Lock's Context
		l.over = true
		l.mu.Unlock()
		return
	}
	l.renewing = true
	l.timer.Reset(left)
	deadline := l.deadline
	l.mu.Unlock()

	sent := time.Now()
	ok, err := l.owner.renew(deadline)
	l.tasks.done()

	l.mu.Lock()
	defer l.mu.Unlock()
	l.renewing = false
	switch {
	case l.over:
	case err == nil && ok:
		l.deadline = sent.Add(l.life)
		l.timer.Reset(l.every)
	case err == nil:
		l.loseLocked()
	case l.tasks.isClosed():
		l.over = true
	default:
		if left := time.Until(l.deadline); left > 0 {
			l.timer.Reset(min(l.retry, left))
		} else {
			l.loseLocked()
		}
	}
}

func (l *lease) loseLocked() {
	l.over, l.lost = true, true
	l.timer.Stop()
	l.owner.lose()
}

// stop ends the renewals and reports whether the lock was lost before.
func (l *lease) stop() (lost bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.over = true
	l.timer.Stop()
	return l.lost
}
