package local

import (
	"context"
	"sync"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// Carrying is the engine in the process for a Runner whose values carry
// bytes from the ctx of their Put to the lease that hands them out
// (engine.Lease.Carried): an Engine of items, each a value and its bytes,
// seen as an engine of values. Without such bytes a Runner uses Engine,
// which holds its values alone.
type Carrying[K comparable, V any] struct {
	e     *Engine[K, item[V]]
	carry func(context.Context) []byte

	mu sync.Mutex
	// leases are the leases out, by the first element of their Carried,
	// which each lease allocates afresh: a key may have several out
	// (Config.PerKey), and a lease's Values may be of a type of size 0.
	leases map[*[]byte]engine.Lease[K, item[V]]
}

// item is a value and the bytes it carries.
type item[V any] struct {
	v       V
	carried []byte
}

var _ engine.Engine[string, int] = (*Carrying[string, int])(nil)

// NewCarrying returns an empty Carrying configured by cfg, whose Put calls
// carry with its ctx for the bytes that the value carries.
func NewCarrying[K comparable, V any](cfg Config[K, V], carry func(context.Context) []byte) (*Carrying[K, V], error) {
	ic := Config[K, item[V]]{
		MaxBatch:  cfg.MaxBatch,
		PerKey:    cfg.PerKey,
		MaxValues: cfg.MaxValues,
		Debounce:  cfg.Debounce,
		MaxWait:   cfg.MaxWait,
		Adaptive:  cfg.Adaptive,
		Clock:     cfg.Clock,
		Tenants:   cfg.Tenants,
		Ready:     cfg.Ready,
	}
	if f := cfg.DropPending; f != nil {
		ic.DropPending = func(key K, items []item[V]) { f(key, values(items)) }
	}
	if f := cfg.Left; f != nil {
		ic.Left = func(key K, items []item[V]) { f(key, values(items)) }
	}
	e, err := New(ic)
	if err != nil {
		return nil, err
	}
	return &Carrying[K, V]{e: e, carry: carry, leases: make(map[*[]byte]engine.Lease[K, item[V]])}, nil
}

// values returns the values of items.
func values[V any](items []item[V]) []V {
	vs := make([]V, len(items))
	for i, it := range items {
		vs[i] = it.v
	}
	return vs
}

// Put implements engine.Engine.
func (c *Carrying[K, V]) Put(ctx context.Context, key K, v V) error {
	return c.e.Put(ctx, key, item[V]{v: v, carried: c.carry(ctx)})
}

// Get implements engine.Engine: the lease's Carried holds the bytes of its
// values, in order.
func (c *Carrying[K, V]) Get(ctx context.Context) (engine.Lease[K, V], error) {
	il, err := c.e.Get(ctx)
	if err != nil {
		return engine.Lease[K, V]{}, err
	}
	l := engine.Lease[K, V]{Key: il.Key, Values: values(il.Values), Attempt: il.Attempt, Carried: make([][]byte, len(il.Values))}
	c.mu.Lock()
	c.leases[&l.Carried[0]] = il
	c.mu.Unlock()
	for i, it := range il.Values {
		l.Carried[i] = it.carried
	}
	return l, nil
}

// Finish implements engine.Engine.
func (c *Carrying[K, V]) Finish(ctx context.Context, l engine.Lease[K, V], o store.Outcome) (bool, error) {
	// Forgotten before the key is free again: its next lease may come at
	// once, from another worker.
	c.mu.Lock()
	il := c.leases[&l.Carried[0]]
	delete(c.leases, &l.Carried[0])
	c.mu.Unlock()
	return c.e.Finish(ctx, il, o)
}

// Keep implements engine.Engine: a lease in the process lasts until it is
// finished.
func (c *Carrying[K, V]) Keep(ctx context.Context, _ engine.Lease[K, V]) (context.Context, engine.Kept) {
	return ctx, engine.InProcess
}

// PutTx implements engine.Engine: the process has no database.
func (c *Carrying[K, V]) PutTx(context.Context, any, K, V) error { return engine.ErrNoTx }

// PutAfter implements engine.Engine.
func (c *Carrying[K, V]) PutAfter(ctx context.Context, key K, v V, d time.Duration) error {
	return c.e.PutAfter(ctx, key, item[V]{v: v, carried: c.carry(ctx)}, d)
}

// PutTxAfter implements engine.Engine: the process has no database.
func (c *Carrying[K, V]) PutTxAfter(context.Context, any, K, V, time.Duration) error {
	return engine.ErrNoTx
}

// Release implements engine.Engine.
func (c *Carrying[K, V]) Release(ctx context.Context, key K) (bool, error) {
	return c.e.Release(ctx, key)
}

// Behind implements engine.Engine.
func (c *Carrying[K, V]) Behind(key K) int { return c.e.Behind(key) }

// Key implements engine.Engine.
func (c *Carrying[K, V]) Key(ctx context.Context, key K) (engine.KeyState, error) {
	return c.e.Key(ctx, key)
}

// Gauges implements engine.Engine.
func (c *Carrying[K, V]) Gauges(ctx context.Context) (engine.Gauges, error) { return c.e.Gauges(ctx) }

// DeadLetters implements engine.Engine: a dropped batch goes to OnDrop
// only.
func (c *Carrying[K, V]) DeadLetters(context.Context, uint64, int) ([]engine.DeadLetter[K, V], error) {
	return nil, engine.ErrNoDeadLetters
}

// Redrive implements engine.Engine, as DeadLetters.
func (c *Carrying[K, V]) Redrive(ctx context.Context, id uint64) (bool, error) {
	return c.e.Redrive(ctx, id)
}

// Purge implements engine.Engine, as DeadLetters.
func (c *Carrying[K, V]) Purge(ctx context.Context, before time.Time) (int, error) {
	return c.e.Purge(ctx, before)
}

// Drain implements engine.Engine.
func (c *Carrying[K, V]) Drain() { c.e.Drain() }

// Close implements engine.Engine.
func (c *Carrying[K, V]) Close() { c.e.Close() }
