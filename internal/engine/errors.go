package engine

import (
	"errors"

	"github.com/pacerkit/pacer/store"
)

// ErrClosed is returned by Put and PutTx once Drain began, and by Get once
// the engine is drained and has nothing more to hand out.
var ErrClosed = errors.New("engine: closed")

// ErrNoTx is returned by PutTx of an engine that cannot add inside a
// transaction.
var ErrNoTx = errors.New("engine: cannot add inside a transaction")

// ErrDelayDebounced is returned by PutAfter and PutTxAfter of an engine
// that debounces: a delayed value does not join a burst (see
// store.AddParams.Delay). The Runner exports it as
// pacer.ErrDelayDebounced, which documents it.
var ErrDelayDebounced = errors.New("pacer: AddAfter, AddAt and AddTxAfter need a Runner without Debounce or Adaptive")

// ErrNoDeadLetters is returned by DeadLetters, Redrive and Purge of an
// engine that keeps no dead letters.
var ErrNoDeadLetters = errors.New("engine: keeps no dead letters")

// ErrNoInspector is returned by Key of an engine over a store that does
// not implement store.Inspector, and so cannot show one key.
var ErrNoInspector = errors.New("engine: the store cannot be inspected")

// ErrLeaseLost is the cause of the ctx of a handler whose lease was lost,
// and is wrapped in the error of a batch whose last attempt lapsed; it
// wraps store.ErrLeaseLost. The Runner exports it as pacer.ErrLeaseLost,
// which documents it.
var ErrLeaseLost error = leaseLost{}

type leaseLost struct{}

func (leaseLost) Error() string { return "pacer: lease lost" }
func (leaseLost) Unwrap() error { return store.ErrLeaseLost }

// ErrUndecodable is wrapped in the error of a lease, or a dead letter,
// whose stored key or values do not decode. The Runner exports it as
// pacer.ErrUndecodable, which documents it.
var ErrUndecodable = errors.New("pacer: stored value does not decode")
