package main

import (
	"fmt"
	"time"
)

// A schedule is a webhook retry policy in two phases, as Hook0 does it:
// a few fast retries whose delay doubles each time, then a few slow ones
// at a fixed delay. A delivery gets 1 + Fast + Slow attempts; after the
// last one fails it is dead-lettered.
type schedule struct {
	Fast      int           // fast retries
	FastDelay time.Duration // delay before the first fast retry; doubles after each
	Slow      int           // slow retries after the fast ones
	SlowDelay time.Duration // delay before each slow retry
}

// attempts is the most calls one delivery gets, the first included.
func (s schedule) attempts() int { return 1 + s.Fast + s.Slow }

// delay returns the wait after failed attempt n (1 for the first call).
func (s schedule) delay(n int) time.Duration {
	if n <= s.Fast {
		return s.FastDelay << (n - 1)
	}
	return s.SlowDelay
}

func (s schedule) validate() error {
	switch {
	case s.Fast < 0 || s.Fast > 20:
		return fmt.Errorf("-fast must be in [0, 20], got %d", s.Fast)
	case s.Slow < 0:
		return fmt.Errorf("-slow must be >= 0, got %d", s.Slow)
	case s.FastDelay <= 0 && s.Fast > 0:
		return fmt.Errorf("-fast-delay must be > 0, got %v", s.FastDelay)
	case s.SlowDelay <= 0 && s.Slow > 0:
		return fmt.Errorf("-slow-delay must be > 0, got %v", s.SlowDelay)
	}
	return nil
}

func (s schedule) String() string {
	return fmt.Sprintf("%d fast retries from %v (doubling), then %d slow every %v", s.Fast, s.FastDelay, s.Slow, s.SlowDelay)
}
