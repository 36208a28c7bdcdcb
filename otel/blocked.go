package pacerotel

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/window"
)

// trackLimit bounds the keys a blocked follows, and so its memory (about
// 100 bytes a key plus the key).
const trackLimit = 10_000

// blocked follows, from a Runner's events, the keys whose batch failed and
// waits at the head of the key: retrying (EventRetry) or held (EventHeld),
// until the key's batch succeeds (EventFinished) or is given up
// (EventDropped). It keeps at most limit keys: a key that starts blocking
// while it is full is not followed, so those it follows stay the ones
// blocked longest. It is safe for concurrent use.
//
// With a Store, another instance may run a key that failed here, and this
// one hears nothing of it: a retrying key is forgotten once its retry has
// been due for grace, and every key not heard of for grace once the
// engine reports no key blocked. grace is 0 in the process, where the
// events tell everything.
type blocked[K comparable] struct {
	limit int
	grace time.Duration

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

// event takes in one of a Runner's events.
func (b *blocked[K]) event(e pacer.Event[K]) {
	switch e.Kind {
	case pacer.EventRetry, pacer.EventHeld:
	case pacer.EventFinished, pacer.EventDropped:
		b.mu.Lock()
		delete(b.keys, e.Key)
		b.mu.Unlock()
		return
	default:
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.keys[e.Key]
	if !ok {
		if cutShort(e.Err) || len(b.keys) >= b.limit {
			// A call the window's close cut short does not fail its batch.
			return
		}
		b.seq++
		k = &blockedKey{since: e.Time, seq: b.seq}
		b.keys[e.Key] = k
	}
	k.seen = e.Time
	k.held = e.Kind == pacer.EventHeld
	k.due = time.Time{}
	if !k.held {
		k.due = e.Time.Add(e.Delay)
	}
	if e.Attempt > 0 {
		k.attempt = e.Attempt
	}
	k.values = e.Size + e.Behind
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
