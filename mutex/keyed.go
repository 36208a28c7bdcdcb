package mutex

import (
	"context"
	"hash/maphash"
)

// Keyed is a mutual exclusion lock per key: one holder per key at a time,
// while different keys never block each other.
//
// Waiters for a key acquire it in arrival order: Unlock hands the key
// directly to the longest waiter, and neither Lock nor TryLock can take a key
// that others are waiting for. A waiter that gives up (LockContext with an
// ended context) leaves the queue without disturbing the order of the others.
//
// State exists only for keys that are held or waited for: it is removed
// when the last holder unlocks, so an idle Keyed holds no per-key memory
// (Len reports 0).
//
// The zero value is an unlocked Keyed ready to use. A Keyed must not be
// copied after first use. It is safe for concurrent use by multiple
// goroutines.
//
// As with sync.Mutex, a locked key is not tied to a goroutine: one goroutine
// may Lock a key and another Unlock it. Keys are compared with ==, as map
// keys are: a floating-point NaN key can be locked but never unlocked.
type Keyed[K comparable] struct {
	shards [numShards]shard[K]
}

// Lock locks key. If the key is already locked, Lock blocks until it is the
// caller's turn: waiters acquire in the order they called.
func (m *Keyed[K]) Lock(key K) {
	s := m.shard(key)
	s.mu.Lock()
	w := s.acquireOrWait(key)
	s.mu.Unlock()
	if w != nil {
		<-w.ready
	}
}

// TryLock locks key if nobody holds or waits for it, and reports whether it
// did. It never blocks and never overtakes waiters.
func (m *Keyed[K]) TryLock(key K) bool {
	s := m.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, _, held := s.find(key); held {
		return false
	}
	s.insert(key)
	return true
}

// LockContext locks key like Lock, but gives up when ctx ends first. It
// then returns ctx.Err() and the state is unchanged: the caller does not
// hold the key, its place in the queue is gone and the other waiters keep
// their order. If ctx has already ended, LockContext fails even when the key
// is free. A nil error means the caller holds the key and must Unlock it.
func (m *Keyed[K]) LockContext(ctx context.Context, key K) error {
	done := ctx.Done()
	if done != nil {
		select {
		case <-done:
			return ctx.Err()
		default:
		}
	}
	s := m.shard(key)
	s.mu.Lock()
	w := s.acquireOrWait(key)
	s.mu.Unlock()
	if w == nil {
		return nil
	}
	select {
	case <-w.ready:
		return nil
	case <-done:
	}
	s.mu.Lock()
	s.leave(key, w)
	s.mu.Unlock()
	return ctx.Err()
}

// Unlock unlocks key, handing it to the longest waiter if there is one.
// It panics if key is not locked.
func (m *Keyed[K]) Unlock(key K) {
	s := m.shard(key)
	s.mu.Lock()
	ok := s.release(key)
	s.mu.Unlock()
	if !ok {
		panic("mutex: Unlock of unlocked key")
	}
}

// Do runs fn while holding key. It waits for the key like LockContext and
// returns ctx.Err() without calling fn if ctx ends first; otherwise it
// returns fn's error. The key is unlocked when fn returns, and also when fn
// panics (the panic then continues) or calls runtime.Goexit. fn receives ctx.
func (m *Keyed[K]) Do(ctx context.Context, key K, fn func(context.Context) error) error {
	if err := m.LockContext(ctx, key); err != nil {
		return err
	}
	defer m.Unlock(key)
	return fn(ctx)
}

// Len returns the number of keys currently held or waited for. It takes
// each internal lock in turn, so under concurrent use the result is only a
// snapshot.
func (m *Keyed[K]) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += s.len()
		s.mu.Unlock()
	}
	return n
}

func (m *Keyed[K]) shard(key K) *shard[K] {
	return &m.shards[maphash.Comparable(seed, key)%numShards]
}
