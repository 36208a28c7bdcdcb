package mutex

import (
	"hash/maphash"
	"math/bits"
	"sync"
)

// numShards is the number of independently locked parts of a Keyed. A key's
// shard is chosen by its hash, so operations on different keys rarely touch
// the same internal lock.
const numShards = 32

// shardSlots is the number of held keys a shard keeps inline, searched
// linearly, before it spills into a map. With keys spread over the shards,
// a few slots cover most shards most of the time, and locking a key then
// costs no map operation.
const shardSlots = 4

// shrinkPeak is the size from which an emptied spill map is dropped instead
// of kept for reuse. Go maps never shrink, so without this a burst of many
// held keys would pin its memory for the life of the Keyed; below it, the
// map is kept so steady-state locking does not allocate.
const shrinkPeak = 64

// seed hashes keys to shards. One seed serves every Keyed, which keeps the
// zero value ready to use.
var seed = maphash.MakeSeed()

// shard holds the state of the keys whose hash falls in it. A key is
// present exactly while it is held: Unlock hands a waited-for key straight
// to the next waiter instead of releasing it, so a key with waiters is
// always held. All methods require mu to be held.
type shard[K comparable] struct {
	mu    sync.Mutex
	used  uint8 // bit i is set while slots[i] holds a key
	slots [shardSlots]slot[K]
	more  map[K]queue // held keys that did not fit in slots
	peak  int         // largest len(more) since more was made
}

type slot[K comparable] struct {
	key     K
	waiters queue
}

// find reports whether key is held and returns its waiters and where it is
// stored: the index of its slot, or -1 for the spill map.
func (s *shard[K]) find(key K) (i int, q queue, held bool) {
	for i := range shardSlots {
		if s.used&(1<<i) != 0 && s.slots[i].key == key {
			return i, s.slots[i].waiters, true
		}
	}
	if len(s.more) > 0 {
		q, held = s.more[key]
	}
	return -1, q, held
}

// store saves the waiters of the held key found at i.
func (s *shard[K]) store(i int, key K, q queue) {
	if i >= 0 {
		s.slots[i].waiters = q
		return
	}
	s.more[key] = q
}

// insert marks the free key as held, with no waiters.
func (s *shard[K]) insert(key K) {
	if s.used != 1<<shardSlots-1 {
		i := bits.TrailingZeros8(^s.used)
		s.used |= 1 << i
		s.slots[i].key = key
		return
	}
	if s.more == nil {
		s.more = make(map[K]queue)
	}
	s.more[key] = queue{}
	s.peak = max(s.peak, len(s.more))
}

// remove forgets the key found at i, which has no waiters.
func (s *shard[K]) remove(i int, key K) {
	if i >= 0 {
		s.used &^= 1 << i
		s.slots[i] = slot[K]{} // drop the key so it can be collected
		return
	}
	delete(s.more, key)
	if len(s.more) == 0 && s.peak >= shrinkPeak {
		s.more, s.peak = nil, 0
	}
}

// len returns the number of held keys.
func (s *shard[K]) len() int {
	return bits.OnesCount8(s.used) + len(s.more)
}

// acquireOrWait takes key if it is free and returns nil, or appends a new
// waiter to the key's queue and returns it.
func (s *shard[K]) acquireOrWait(key K) *waiter {
	i, q, held := s.find(key)
	if !held {
		s.insert(key)
		return nil
	}
	// Allocating here is fine: it happens only under contention, where
	// the caller is about to block anyway. Waiters are not pooled because
	// their channels would then cross testing/synctest bubbles.
	w := &waiter{ready: make(chan struct{})}
	q.push(w)
	s.store(i, key, q)
	return w
}

// release hands key to its first waiter, or frees it when nobody waits.
// It reports false if key was not held.
func (s *shard[K]) release(key K) bool {
	i, q, held := s.find(key)
	if !held {
		return false
	}
	if w := q.pop(); w != nil {
		s.store(i, key, q)
		w.granted = true
		close(w.ready)
		return true
	}
	s.remove(i, key)
	return true
}

// leave withdraws waiter w of key, which gave up. If the key was handed to
// w in the meantime, it is passed on, as if w had left before its turn.
func (s *shard[K]) leave(key K, w *waiter) {
	if w.granted {
		s.release(key)
		return
	}
	i, q, _ := s.find(key)
	q.remove(w)
	s.store(i, key, q)
}
