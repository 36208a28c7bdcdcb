package store

import (
	"context"
	"errors"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/fifo"
)

var _ Store[string, int] = (*Memory[string, int])(nil)

// Memory is the in-process Store: a thin adapter over fifo.Groups, which
// keeps the order, the leases, the attempt counts, the retry delays and the
// counts the Runner reads.
type Memory[K comparable, V any] struct {
	g *fifo.Groups[K, V]
}

// NewMemory returns an empty Memory leasing at most maxBatch values at a
// time (0: all of a key's values).
func NewMemory[K comparable, V any](maxBatch int, clk clock.Clock) (*Memory[K, V], error) {
	g, err := fifo.NewGroups[K, V](fifo.GroupsConfig{MaxBatch: maxBatch, Clock: clk})
	if err != nil {
		return nil, err
	}
	return &Memory[K, V]{g: g}, nil
}

// stopped turns fifo's shutdown error into ErrStopped.
func stopped(err error) error {
	if errors.Is(err, fifo.ErrClosed) {
		return ErrStopped
	}
	return err
}

// Put implements Store.
func (m *Memory[K, V]) Put(_ context.Context, key K, vs ...V) error {
	return stopped(m.g.Put(key, vs...))
}

// Get implements Store.
func (m *Memory[K, V]) Get(ctx context.Context) (Lease[K, V], error) {
	l, err := m.g.Get(ctx)
	if err != nil {
		return Lease[K, V]{}, stopped(err)
	}
	return Lease[K, V]{Key: l.Key, Values: l.Messages, Attempt: l.Attempt, mem: l}, nil
}

// Keep implements Store: a Memory lease lasts until it is ended.
func (m *Memory[K, V]) Keep(ctx context.Context, _ Lease[K, V]) (context.Context, func() error) {
	return ctx, kept
}

func kept() error { return nil }

// Ack implements Store.
func (m *Memory[K, V]) Ack(_ context.Context, l Lease[K, V]) (bool, error) {
	return m.g.Ack(l.mem), nil
}

// Drop implements Store. Memory keeps no dead letters: the Runner hands
// the values to OnDrop.
func (m *Memory[K, V]) Drop(_ context.Context, l Lease[K, V], _ error) (bool, error) {
	return m.g.Drop(l.mem), nil
}

// Retry implements Store.
func (m *Memory[K, V]) Retry(_ context.Context, l Lease[K, V], after time.Duration) error {
	m.g.Retry(l.mem, after)
	return nil
}

// Defer implements Store.
func (m *Memory[K, V]) Defer(_ context.Context, l Lease[K, V], after time.Duration) error {
	m.g.Defer(l.mem, after)
	return nil
}

// Hold implements Store.
func (m *Memory[K, V]) Hold(_ context.Context, l Lease[K, V]) error {
	m.g.Hold(l.mem)
	return nil
}

// Release implements Store.
func (m *Memory[K, V]) Release(_ context.Context, key K) (bool, error) {
	return m.g.Release(key), nil
}

// Len returns the number of values not out on a lease: the backlog that
// adaptive debounce reads.
func (m *Memory[K, V]) Len() int { return m.g.Len() }

// Gauges implements Store. Values is -1: the Runner counts its values,
// debouncing ones included, itself.
func (m *Memory[K, V]) Gauges(context.Context) (Gauges, error) {
	s := m.g.Stats()
	return Gauges{
		Values:   -1,
		Queued:   s.Waiting,
		InFlight: s.Leases,
		Held:     s.Held,
		Retrying: s.Retrying,
		Blocked:  s.BehindRetrying,
	}, nil
}

// Active implements Store.
func (m *Memory[K, V]) Active() int {
	s := m.g.Stats()
	return s.Messages - s.HeldMessages
}

// Behind implements Store.
func (m *Memory[K, V]) Behind(key K) int { return m.g.Behind(key) }

// Stop implements Store.
func (m *Memory[K, V]) Stop() { m.g.ShutDown() }

// Close implements Store.
func (m *Memory[K, V]) Close(left func(key K, vs []V)) { m.g.Close(left) }
