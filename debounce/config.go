package debounce

import (
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
)

// Config configures a Keyed debouncer. Wait is required; every other field
// has a usable zero value.
type Config struct {
	// Wait is how long a key must stay quiet before its burst fires: every
	// Add moves the key's deadline to now+Wait. It must be > 0. Deadlines
	// saturate rather than wrap, so math.MaxInt64 means forever: the burst
	// fires only through MaxWait, MaxItems, Flush or Shutdown.
	Wait time.Duration

	// MaxWait bounds how long a burst is held while Adds keep coming: it
	// fires at the latest at its first Add plus MaxWait. Zero, the default,
	// means no bound, and so does math.MaxInt64; otherwise it must be >=
	// Wait.
	MaxWait time.Duration

	// MaxItems, when > 0, fires a burst at once when it holds that many
	// values. Zero, the default, means no limit. It must be >= 0.
	MaxItems int

	// Leading fires the first value of a quiet key at once, as a burst of
	// one; the values that follow it within the burst fire at its trailing
	// edge. A burst that receives no value after the first fires only once.
	// A key is quiet when it has had no Add for Wait (or Cancel forgot its
	// Adds): a burst that opens sooner, say right after a MaxWait or
	// MaxItems fire or a Flush, does not lead, so {Wait: W, MaxWait: W,
	// Leading: true} is a throttle that fires at most once per W. The
	// default is false: trailing edge only.
	Leading bool

	// Clock is the time source. The default, nil, is clock.New(), the wall
	// clock, which also runs on fake time inside testing/synctest bubbles.
	Clock clock.Clock
}

func (c *Config) validate() error {
	if c.Wait <= 0 {
		return fmt.Errorf("debounce: Config.Wait must be > 0, got %v", c.Wait)
	}
	if c.MaxWait != 0 && c.MaxWait < c.Wait {
		return fmt.Errorf("debounce: Config.MaxWait must be 0 or >= Config.Wait (%v), got %v", c.Wait, c.MaxWait)
	}
	if c.MaxItems < 0 {
		return fmt.Errorf("debounce: Config.MaxItems must be >= 0, got %d", c.MaxItems)
	}
	return nil
}
