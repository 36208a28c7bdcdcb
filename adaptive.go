package pacer

import (
	"fmt"
	"time"

	"github.com/pacerkit/pacer/internal/adaptive"
)

// Adaptive makes the debounce quiet period follow the pressure on the
// Runner: it grows from Config.Debounce towards Max as the backlog of queued
// values grows, and after each shared rate-limit pause (a handler returning
// PauseAll or a ratelimit.LimitError; RetryAfter delays one key and does
// not count), then decays back with a half-life once the pressure goes. A
// key's burst waits the target quiet period of the moment it opens, and
// keeps it while values join; Stats.Debounce reports the target. With a
// Config.Store, the backlog is the values the engine stores, read at most
// once a second, and each Add passes the target of its moment to the
// engine, which sets the burst's deadline from it. A longer
// quiet period coalesces more values per handler call, which is what a
// saturated downstream needs. The zero value (Max == 0) turns it off.
type Adaptive struct {
	// Max is the longest quiet period; it must be >= Config.Debounce, and
	// Config.MaxWait, when set, still bounds every burst. 0 disables
	// adaptive debounce.
	Max time.Duration
	// Backlog is the number of queued values at which the target quiet
	// period reaches Max; below it the target grows linearly. The default is
	// 1000. It needs Max.
	Backlog int
	// HalfLife is how fast the extra quiet period decays once the pressure
	// is gone. The default is 1 minute. It needs Max.
	HalfLife time.Duration
}

func (a Adaptive) withDefaults() Adaptive {
	if a.Backlog == 0 {
		a.Backlog = 1000
	}
	if a.HalfLife == 0 {
		a.HalfLife = time.Minute
	}
	return a
}

func (a Adaptive) validate(debounce time.Duration) error {
	switch {
	case a.Max == 0 && a.Backlog != 0:
		return fmt.Errorf("pacer: Config.Adaptive.Backlog applies only with Config.Adaptive.Max, which is 0")
	case a.Max == 0 && a.HalfLife != 0:
		return fmt.Errorf("pacer: Config.Adaptive.HalfLife applies only with Config.Adaptive.Max, which is 0")
	case a.Max == 0:
		return nil
	case debounce <= 0:
		return fmt.Errorf("pacer: Config.Adaptive needs Config.Debounce > 0, got %v", debounce)
	case a.Max < debounce:
		return fmt.Errorf("pacer: Config.Adaptive.Max must be >= Config.Debounce (%v), got %v", debounce, a.Max)
	case a.Backlog < 0:
		return fmt.Errorf("pacer: Config.Adaptive.Backlog must be >= 0, got %d", a.Backlog)
	case a.HalfLife < 0:
		return fmt.Errorf("pacer: Config.Adaptive.HalfLife must be >= 0, got %v", a.HalfLife)
	}
	return nil
}

// wait returns the controller of a on top of the quiet period min.
func (a Adaptive) wait(min time.Duration) *adaptive.Wait {
	a = a.withDefaults()
	return adaptive.New(min, a.Max, a.Backlog, a.HalfLife)
}
