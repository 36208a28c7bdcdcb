package pacerotel

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/window"
)

// trackLimit bounds the keys a blocked follows, and so its memory (about
// 100 bytes a key plus the key).
const trackLimit = 10_000

// blocked follows the keys whose batch failed and waits at the head of the
// key, retrying or held, until the key's batch succeeds or is given up: the
// handler wrapper tells it of each call, and a Runner's events, when
// wired, of the values behind a failed batch and when it is retried. It
// keeps at most limit keys: a key that starts blocking while it is full is
// not followed, so those it follows stay the ones blocked longest. It is
// safe for concurrent use.
//
// With a Store, another instance may run a key that failed here, and this
// one hears nothing of it: a retrying key is forgotten once its retry has
// been due for grace, and every key not heard of for grace once the
// engine reports no key blocked. grace is 0 in the process, where the
// events tell everything.
type blocked[K comparable] struct {
	limit int
	grace time.Duration

	n    atomic.Int64 // len(keys), read without mu
	mu   sync.Mutex
	keys map[K]*blockedKey
	seq  uint64
}

// blockedKey is what a blocked knows of one key.
type blockedKey struct {
	since   time.Time // when the batch that blocks the key first failed
	seen    time.Time // the key's last event
	due     time.Time // when its retry comes due; zero when held
	attempt int       // of the last failed call
	values  int       // the batch and the values behind it
	held    bool
	seq     uint64 // order of arrival, for ties
}

// blockedView is one key as a snapshot shows it.
type blockedView[K comparable] struct {
	key K
	blockedKey
}

func newBlocked[K comparable](limit int, grace time.Duration) *blocked[K] {
	return &blocked[K]{limit: limit, grace: grace, keys: make(map[K]*blockedKey)}
}

// failed records that key's batch failed at at, on its attempt, with
// values waiting (the batch, and those behind it when known), and that the
// key is now held, or retried at due.
func (b *blocked[K]) failed(key K, at time.Time, attempt, values int, held bool, due time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.keys[key]
	if !ok {
		if len(b.keys) >= b.limit {
			return
		}
		b.seq++
		k = &blockedKey{since: at, seq: b.seq}
		b.keys[key] = k
		b.n.Store(int64(len(b.keys)))
	}
	k.seen, k.held, k.due = at, held, due
	if held {
		k.due = time.Time{}
	}
	if attempt > 0 {
		k.attempt = attempt
	}
	k.values = values
}

// ended records that key's batch succeeded or was given up: O(1), and
// without a lock while no key is blocked.
func (b *blocked[K]) ended(key K) {
	if b.n.Load() == 0 {
		return // the usual case: a batch ends and no key is blocked
	}
	b.mu.Lock()
	delete(b.keys, key)
	b.n.Store(int64(len(b.keys)))
	b.mu.Unlock()
}

// event takes in one of a Runner's events, which tell the values behind a
// failed batch and when it is retried.
func (b *blocked[K]) event(e pacer.Event[K]) {
	switch e.Kind {
	case pacer.EventRetry:
		if cutShort(e.Err) && !b.has(e.Key) {
			// A call the window's close cut short does not fail its batch.
			return
		}
		b.failed(e.Key, e.Time, e.Attempt, e.Size+e.Behind, false, e.Time.Add(e.Delay))
	case pacer.EventHeld:
		b.failed(e.Key, e.Time, e.Attempt, e.Size+e.Behind, true, time.Time{})
	case pacer.EventFinished, pacer.EventDropped:
		b.ended(e.Key)
	}
}

// has reports whether key is followed.
func (b *blocked[K]) has(key K) bool {
	if b.n.Load() == 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.keys[key]
	return ok
}

// cutShort reports whether err is that of a call the Runner's window cut
// short (EventRetry without an attempt counted).
func cutShort(err error) bool {
	return errors.Is(err, window.ErrOutside) || errors.Is(err, context.Canceled)
}

// snapshotAt returns, at now, the key blocked longest and up to n of the
// keys blocked longest, longest first. engineBlocked is the number of
// blocked keys the engine reports (Stats.Retrying + Stats.Held), which
// lets a blocked with a grace forget the keys that other instances ran.
func (b *blocked[K]) snapshotAt(now time.Time, n, engineBlocked int) (oldest blockedView[K], ok bool, top []blockedView[K]) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.grace > 0 {
		for key, k := range b.keys {
			stale := !k.held && now.Sub(k.due) > b.grace ||
				engineBlocked == 0 && now.Sub(k.seen) > b.grace
			if stale {
				delete(b.keys, key)
			}
		}
		b.n.Store(int64(len(b.keys)))
	}
	top = make([]blockedView[K], 0, max(n, 1))
	for key, k := range b.keys {
		v := blockedView[K]{key: key, blockedKey: *k}
		if !ok || v.before(oldest) {
			oldest, ok = v, true
		}
		if n <= 0 {
			continue
		}
		// Insert v into top, which is sorted and holds at most n.
		i := len(top)
		for i > 0 && v.before(top[i-1]) {
			i--
		}
		if i < n {
			if len(top) < n {
				top = append(top, v)
			}
			copy(top[i+1:], top[i:len(top)-1])
			top[i] = v
		}
	}
	return oldest, ok, top
}

// before reports whether v was blocked before w.
func (v blockedView[K]) before(w blockedView[K]) bool {
	if !v.since.Equal(w.since) {
		return v.since.Before(w.since)
	}
	return v.seq < w.seq
}

// len returns the number of keys followed.
func (b *blocked[K]) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.keys)
}
