package engine

import (
	"time"

	"github.com/pacerkit/pacer/store"
)

// A DeadLetter is a batch given up, as the engine keeps it, decoded: the
// fields of pacer.DeadLetter, which converts from it.
type DeadLetter[K comparable, V any] struct {
	ID        uint64
	Key       K
	Values    []V
	Err       string
	Attempt   int
	At        time.Time
	DecodeErr error
	Raw       store.DeadLetter
}
