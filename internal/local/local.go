// Package local is the engine of a pacer Runner that keeps its values in
// the process: a fifo.Groups holds them in order per key and leases them
// out, a debounce.Keyed in front of it collects each key's burst, and a
// counter bounds the values held (Config.MaxValues). It implements
// engine.Engine: its leases never lapse, Put refuses a value only past
// MaxValues or once Drain began, and it keeps no dead letters and takes
// part in no transaction.
//
// The engine owns the values from Put until Finish acks or drops them;
// those it gives up without a lease (bursts dropped at Drain, values left at
// Close) go to the callbacks of its Config.
package local

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/debounce"
	"github.com/pacerkit/pacer/fifo"
	"github.com/pacerkit/pacer/internal/adaptive"
	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/internal/timing"
	"github.com/pacerkit/pacer/store"
)

// Config configures an Engine. The zero value is valid: no debounce, no
// bound, all of a key's values per lease, the real clock.
type Config[K comparable, V any] struct {
	// MaxBatch is the most values one lease holds; 0 means all of the
	// key's.
	MaxBatch int
	// PerKey is the most leases of one key out at once, each of its own
	// batch (fifo.GroupsConfig.PerKey); 0 and 1 mean one.
	PerKey int
	// MaxValues bounds the values held at once, debouncing, queued or
	// leased: past it Put refuses a value with store.ErrFull. 0 means no
	// bound.
	MaxValues int
	// Debounce is the quiet period of a key's burst; 0 queues each value
	// at once. MaxWait bounds a burst (0: no bound).
	Debounce, MaxWait time.Duration
	// Adaptive, when set, chooses the quiet period of each burst that
	// opens from the backlog.
	Adaptive *adaptive.Wait
	// Clock is the time source; nil is the real clock.
	Clock clock.Clock
	// Tenants, when its Of is set, makes the keys take turns across
	// tenants (fifo.NewFairGroups).
	Tenants fifo.Tenants[K]

	// Ready, when set, is called with each burst that closed and entered
	// its key's queue, n values whose first was put at first, on the
	// debouncer's goroutine. Values that came due (PutAfter) are not
	// reported.
	Ready func(key K, n int, first time.Time)
	// DropPending, when set, is given the bursts still open at Drain,
	// instead of queueing them to be handled.
	DropPending func(key K, vs []V)
	// Left, when set, is given every value the engine still holds at
	// Close, a batch at a time and in order within a key, and a burst that
	// closed after Close.
	Left func(key K, vs []V)
}

// Engine is the engine in the process. Make one with New; Close it.
type Engine[K comparable, V any] struct {
	cfg      Config[K, V]
	g        *fifo.Groups[K, V]
	d        *debounce.Keyed[K, V] // nil without Debounce
	clk      timing.Clock
	delays   delays[K, V] // the keys that wait for a delayed value (delay.go)
	held     atomic.Int64 // values held, counted only with MaxValues
	dropping atomic.Bool  // Drain began with DropPending: bursts go to it
	draining atomic.Bool  // Drain began: Put refuses, Get stops the Groups once drained

	// The notes of the keys whose head batch was retried, deferred or
	// held (key.go); noted counts them, read without the lock.
	notesMu sync.Mutex
	notes   map[K]note
	noted   atomic.Int64
}

var _ engine.Engine[string, int] = (*Engine[string, int])(nil)

// New returns an empty Engine configured by cfg.
func New[K comparable, V any](cfg Config[K, V]) (*Engine[K, V], error) {
	gc := fifo.GroupsConfig{MaxBatch: cfg.MaxBatch, PerKey: cfg.PerKey, Clock: cfg.Clock}
	var g *fifo.Groups[K, V]
	var err error
	if cfg.Tenants.Of != nil {
		g, err = fifo.NewFairGroups[K, V](gc, cfg.Tenants)
	} else {
		g, err = fifo.NewGroups[K, V](gc)
	}
	if err != nil {
		return nil, err
	}
	e := &Engine[K, V]{cfg: cfg, g: g, clk: timing.From(cfg.Clock)}
	if cfg.Debounce > 0 {
		dc := debounce.Config{Wait: cfg.Debounce, MaxWait: cfg.MaxWait, Clock: cfg.Clock}
		if e.d, err = debounce.New(dc, e.fired); err != nil {
			g.Close(nil)
			return nil, err
		}
	}
	return e, nil
}

// closed turns the ErrClosed of fifo and of debounce into the engine's.
func closed(err error) error {
	if errors.Is(err, fifo.ErrClosed) || errors.Is(err, debounce.ErrClosed) {
		return engine.ErrClosed
	}
	return err
}

// Get implements engine.Engine. Once Drain began, the Groups are shut down
// here as soon as nothing but held keys is left: a worker comes back to
// Get after it finished its batch and reported it, and a key that OnEvent
// released meanwhile is handled before the engine stops.
func (e *Engine[K, V]) Get(ctx context.Context) (engine.Lease[K, V], error) {
	if e.draining.Load() {
		e.stopIfDrained()
	}
	l, err := e.g.Get(ctx)
	if err != nil {
		return engine.Lease[K, V]{}, closed(err)
	}
	return engine.Lease[K, V]{Key: l.Key, Values: l.Messages, Attempt: l.Attempt, Local: l}, nil
}

// Keep implements engine.Engine: a lease in the process lasts until it is
// finished.
func (e *Engine[K, V]) Keep(ctx context.Context, _ engine.Lease[K, V]) (context.Context, engine.Kept) {
	return ctx, engine.InProcess
}

// Finish implements engine.Engine. A Drop is not kept: the Runner hands
// the values to OnDrop.
func (e *Engine[K, V]) Finish(_ context.Context, l engine.Lease[K, V], o store.Outcome) (bool, error) {
	switch o.Kind {
	case store.Ack:
		e.unnote(l.Key)
		more := e.g.Ack(l.Local)
		e.release(len(l.Values))
		return more, nil
	case store.Drop:
		e.unnote(l.Key)
		more := e.g.Drop(l.Local)
		e.release(len(l.Values))
		return more, nil
	case store.Retry:
		e.note(l.Key, o)
		e.g.Retry(l.Local, o.After)
	case store.Defer:
		e.note(l.Key, o)
		e.g.Defer(l.Local, o.After)
	case store.Hold:
		e.note(l.Key, o)
		e.g.Hold(l.Local)
	default:
		panic(fmt.Sprintf("local: Finish with an unknown outcome %d", o.Kind))
	}
	return true, nil
}

// Behind implements engine.Engine.
func (e *Engine[K, V]) Behind(key K) int { return e.g.Behind(key) }

// Gauges implements engine.Engine. Values is -1: the Runner counts its
// values itself.
func (e *Engine[K, V]) Gauges(context.Context) (engine.Gauges, error) {
	s := e.g.Stats()
	g := engine.Gauges{
		Values:   -1,
		Queued:   s.Waiting + e.delayed(),
		InFlight: s.Leases,
		Held:     s.Held,
		Retrying: s.Retrying,
		Blocked:  s.BehindRetrying,
	}
	if e.d != nil {
		g.Pending = e.d.Pending()
	}
	return g, nil
}

// PutTx implements engine.Engine: the process has no database.
func (e *Engine[K, V]) PutTx(context.Context, any, K, V) error { return engine.ErrNoTx }

// DeadLetters implements engine.Engine: a dropped batch goes to OnDrop
// only.
func (e *Engine[K, V]) DeadLetters(context.Context, uint64, int) ([]engine.DeadLetter[K, V], error) {
	return nil, engine.ErrNoDeadLetters
}

// Redrive implements engine.Engine, as DeadLetters.
func (e *Engine[K, V]) Redrive(context.Context, uint64) (bool, error) {
	return false, engine.ErrNoDeadLetters
}

// Purge implements engine.Engine, as DeadLetters.
func (e *Engine[K, V]) Purge(context.Context, time.Time) (int, error) {
	return 0, engine.ErrNoDeadLetters
}
