package mutex

import (
	"context"
	"hash/maphash"
	"sync"
)

// numShards is the number of independently locked parts of a Keyed. A key's
// shard is chosen by its hash, so operations on different keys rarely touch
// the same internal lock. It must be a power of two.
const numShards = 32

// shrinkPeak is the size from which an emptied shard drops its map instead of
// keeping it for reuse. Go maps never shrink, so without this a burst of
// many keys would pin its memory for the life of the Keyed; below it, the map
// is kept so steady-state locking does not allocate.
const shrinkPeak = 64

// seed hashes keys to shards. One seed serves every Keyed, which keeps the
// zero value ready to use.
var seed = maphash.MakeSeed()

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
// may Lock a key and another Unlock it.
type Keyed[K comparable] struct {
	shards [numShards]shard[K]
}

// shard holds the state of the keys whose hash falls in it.
type shard[K comparable] struct {
	mu sync.Mutex
	// held maps every held key to its waiters; a key is present exactly
	// while it is held, since Unlock hands a waited-for key over instead of
	// releasing it.
	held map[K]queue
	peak int // largest len(held) since the map was made
	_    [64 - 24]byte
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
	if _, held := s.held[key]; held {
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
	if w.granted {
		// The key was handed over while ctx ended. Pass it on, as if
		// this waiter had left before its turn.
		s.release(key)
	} else {
		q := s.held[key]
		q.remove(w)
		s.held[key] = q
	}
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
		n += len(s.held)
		s.mu.Unlock()
	}
	return n
}

func (m *Keyed[K]) shard(key K) *shard[K] {
	return &m.shards[maphash.Comparable(seed, key)%numShards]
}

// acquireOrWait takes key if it is free and returns nil, or appends a new
// waiter to the key's queue and returns it. s.mu must be held.
func (s *shard[K]) acquireOrWait(key K) *waiter {
	q, held := s.held[key]
	if !held {
		s.insert(key)
		return nil
	}
	// Allocating here is fine: it happens only under contention, where
	// the caller is about to block anyway. Waiters are not pooled because
	// their channels would then cross testing/synctest bubbles.
	w := &waiter{ready: make(chan struct{})}
	q.push(w)
	s.held[key] = q
	return w
}

// insert marks the free key as held. s.mu must be held.
func (s *shard[K]) insert(key K) {
	if s.held == nil {
		s.held = make(map[K]queue)
	}
	s.held[key] = queue{}
	s.peak = max(s.peak, len(s.held))
}

// release hands key to its first waiter, or frees it when nobody waits.
// It reports false if key was not held. s.mu must be held.
func (s *shard[K]) release(key K) bool {
	q, held := s.held[key]
	if !held {
		return false
	}
	if w := q.pop(); w != nil {
		s.held[key] = q
		w.granted = true
		close(w.ready)
		return true
	}
	delete(s.held, key)
	if len(s.held) == 0 && s.peak >= shrinkPeak {
		s.held, s.peak = nil, 0
	}
	return true
}
