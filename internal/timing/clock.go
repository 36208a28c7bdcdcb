// Package timing is the one place that adapts github.com/benbjohnson/clock.
//
// Inside pacer every time-dependent piece talks to the tiny Clock interface
// below, so the archived clock module stays at the edge: users hand a
// clock.Clock (clock.New() or a *clock.Mock) to a Config, and From turns it
// into a Clock. The real clock passes straight through to the time package,
// which makes it work inside testing/synctest bubbles.
package timing

import (
	"reflect"
	"sync"
	"time"

	"github.com/benbjohnson/clock"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is a resettable one-shot timer.
type Timer interface {
	C() <-chan time.Time
	Reset(d time.Duration) bool
	Stop() bool
}

var realClockType = reflect.TypeOf(clock.New())

// From adapts c. A nil c, or clock.New(), yields the real clock.
func From(c clock.Clock) Clock {
	if c == nil || reflect.TypeOf(c) == realClockType {
		return Real{}
	}
	return adapted{c}
}

// Real is the wall clock of the time package.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }
func (r realTimer) Stop() bool                 { return r.t.Stop() }

type adapted struct{ c clock.Clock }

func (a adapted) Now() time.Time                 { return a.c.Now() }
func (a adapted) NewTimer(d time.Duration) Timer { return mockTimer{a.c.Timer(d)} }

// mockTimer drops an unread tick on Stop and Reset, as time.Timer does
// since Go 1.23. A mock timer keeps it in C's one slot, where it would wake
// the owner spuriously, and the next tick would block the mock clock,
// holding its lock, until the stale one was read.
type mockTimer struct{ t *clock.Timer }

func (m mockTimer) C() <-chan time.Time { return m.t.C }

func (m mockTimer) Reset(d time.Duration) bool {
	active := m.Stop()
	m.t.Reset(d)
	return active
}

func (m mockTimer) Stop() bool {
	m.drain() // unblocks a tick being sent, which holds the clock's lock
	active := m.t.Stop()
	m.drain() // a tick sent before Stop took the lock
	return active
}

func (m mockTimer) drain() {
	select {
	case <-m.t.C:
	default:
	}
}

// Sleep waits for d on c, or until ctx-like done closes. It reports whether
// the full duration passed.
func Sleep(c Clock, d time.Duration, done <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-done:
		return false
	}
}

// AfterFunc calls f on a goroutine of its own once d passed on c, unless
// the returned stop is called first; stop reports whether it stopped the
// call. Unlike a timer that a goroutine waits on, it holds no goroutine
// while it waits.
func AfterFunc(c Clock, d time.Duration, f func()) (stop func() bool) {
	switch c := c.(type) {
	case Real:
		return time.AfterFunc(d, f).Stop
	case adapted:
		return c.c.AfterFunc(d, f).Stop
	}
	t := c.NewTimer(d)
	stopped := make(chan struct{})
	var once sync.Once
	go func() {
		select {
		case <-t.C():
			f()
		case <-stopped:
		}
	}()
	return func() bool {
		ok := t.Stop()
		once.Do(func() { close(stopped) })
		return ok
	}
}
