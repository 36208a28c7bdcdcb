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
	if errors.Is(err, fifo.ErrShutDown) {
		return ErrStopped
	}
	return err
}

// Put implements Store.
func (m *Memory[K, V]) Put(key K, vs ...V) error { return stopped(m.g.Put(key, vs...)) }

// Get implements Store.
func (m *Memory[K, V]) Get(ctx context.Context) (Lease[K, V], error) {
	l, err := m.g.Get(ctx)
	if err != nil {
		return Lease[K, V]{}, stopped(err)
	}
	return Lease[K, V]{Key: l.Key, Values: l.Messages, Attempt: l.Attempt, mem: l}, nil
}

// Ack implements Store.
func (m *Memory[K, V]) Ack(l Lease[K, V]) bool { return m.g.Ack(l.mem) }

// Drop implements Store.
func (m *Memory[K, V]) Drop(l Lease[K, V]) bool { return m.g.Drop(l.mem) }

// Retry implements Store.
func (m *Memory[K, V]) Retry(l Lease[K, V], after time.Duration) { m.g.Retry(l.mem, after) }

// Defer implements Store.
func (m *Memory[K, V]) Defer(l Lease[K, V], after time.Duration) { m.g.Defer(l.mem, after) }

// Hold implements Store.
func (m *Memory[K, V]) Hold(l Lease[K, V]) { m.g.Hold(l.mem) }

// Release implements Store.
func (m *Memory[K, V]) Release(key K) bool { return m.g.Release(key) }

// Len implements Store.
func (m *Memory[K, V]) Len() int { return m.g.Len() }

// Leased implements Store.
func (m *Memory[K, V]) Leased() int { return m.g.Leased() }

// Held implements Store.
func (m *Memory[K, V]) Held() int { return m.g.Stats().Held }

// Retrying implements Store.
func (m *Memory[K, V]) Retrying() (keys, behind int) {
	s := m.g.Stats()
	return s.Retrying, s.BehindRetrying
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
