package redismutex

import (
	"container/heap"
	"sync"
	"time"

	"github.com/pacerkit/pacer/internal/sched"
	"github.com/pacerkit/pacer/internal/timing"
)

// leaseOwner is what a lease renews and gives up: a Lock.
type leaseOwner interface {
	// renew extends the lock in Redis, giving up at deadline: true if it
	// is still the owner's, false if not, or an error if Redis did not
	// say.
	renew(deadline time.Time) (bool, error)
	// lose tells the owner that the lock is lost. It is called at most
	// once, with the renewer's mutex held: it must not block.
	lose()
}

// A lease is the renewal state of one held lock.
type lease struct {
	owner    leaseOwner
	next     time.Time // when the renewer acts next: renews, or gives up
	deadline time.Time // when the lock is lost, unless a renewal succeeds first
	renewing bool      // a renewal is in flight; next is the deadline
	over     bool      // stopped or lost: nothing more to do
	lost     bool
	index    int // in the renewer's heap, -1 when out of it
}

// A renewer keeps the locks of a Locker alive and says when one is lost.
// It renews each lock every TTL/3, after the last renewal answered, on a
// goroutine of its own per renewal.
//
// A lock is lost when a renewal finds it is no longer the owner's, or
// when no renewal succeeded for TTL minus a margin, measured on the local
// clock from when the last successful call (the acquisition, then each
// renewal) was sent: Redis started the TTL later than that, so the owner
// gives up before Redis lets another take the lock, by at least the
// margin. A renewal that fails with an error is tried again every TTL/10
// until then; one that has not answered by then is given up.
//
// One goroutine (a sched.Loop, started by the first lock) sleeps on one
// timer until the earliest thing to do, so that taking and releasing a
// lock costs a heap push and a heap removal under a mutex, and no timer
// of the runtime: arming one, that becomes the runtime's earliest, wakes
// a thread blocked in the network poller, which the next round trip pays
// for (TestMeasureTimerBeforeRoundTrip; see BENCHMARKS.md).
//
// Nor, mostly, does it wake the loop. A loop that finds no lease goes on
// ticking every TTL/3 while locks keep coming (one came since its last
// run), and sleeps without a timer only after a whole tick with none: a
// lock's first renewal is due TTL/3 after it, never before the next tick,
// so only the first lock after an idle spell wakes the loop. Sleeping at
// once on an empty heap would make every lock of a caller that locks and
// unlocks in turn wake it: the loop would run after the Unlock, find the
// heap empty again, and need the next lock to wake it, a goroutine wake
// (a thread, on an idle core) per lock.
type renewer struct {
	tasks *tasks // the Locker's: no renewal starts after Close
	every time.Duration
	retry time.Duration
	life  time.Duration // how long a lock is surely held after a call succeeded, TTL minus the margin

	mu     sync.Mutex
	leases leaseHeap
	loop   *sched.Loop // nil until the first lock
	wakeAt time.Time   // when the loop runs next, zero when it sleeps without a timer
	added  bool        // a lease was added since the loop last ran
	closed bool
}

// margin is how long before Redis could expire a lock its holder gives it
// up; see the package doc.
func margin(ttl time.Duration) time.Duration { return ttl / 10 }

func newRenewer(ttl time.Duration, tasks *tasks) *renewer {
	return &renewer{tasks: tasks, every: ttl / 3, retry: margin(ttl), life: ttl - margin(ttl)}
}

// add starts renewing l, the lease of a lock acquired by a call sent at
// sent.
func (r *renewer) add(l *lease, owner leaseOwner, sent time.Time) {
	l.owner = owner
	l.deadline = sent.Add(r.life)
	l.next = time.Now().Add(r.every)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		l.over, l.index = true, -1
		return
	}
	heap.Push(&r.leases, l)
	r.added = true
	if r.loop == nil {
		r.loop = sched.Start(timing.Real{}, r.run)
		return
	}
	r.wakeFor(l.next)
}

// wakeFor wakes the loop if it would sleep past at. r.mu is held.
func (r *renewer) wakeFor(at time.Time) {
	if r.wakeAt.IsZero() || at.Before(r.wakeAt) {
		r.loop.Wake()
	}
}

// stop ends the renewals of l and reports whether the lock was lost
// before.
func (r *renewer) stop(l *lease) (lost bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l.over = true
	if l.index >= 0 {
		heap.Remove(&r.leases, l.index)
	}
	return l.lost
}

// close stops the loop; renewals in flight end by themselves, counted by
// the Locker's tasks. The leases are left as they are: Close cancelled
// their Contexts.
func (r *renewer) close() {
	r.mu.Lock()
	r.closed = true
	loop := r.loop
	r.mu.Unlock()
	if loop != nil {
		loop.Stop()
	}
}

// run is the loop's: it renews the leases due, gives up those past their
// deadline, and returns when to run next.
func (r *renewer) run(now time.Time) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.leases) > 0 && !r.leases[0].next.After(now) {
		l := r.leases[0]
		switch {
		case !now.Before(l.deadline): // a renewal in flight too
			heap.Pop(&r.leases)
			r.loseLocked(l)
		case r.closed || !r.tasks.start():
			heap.Pop(&r.leases)
			l.over = true
		default:
			l.renewing = true
			l.next = l.deadline // give up then, unless the renewal answers first
			heap.Fix(&r.leases, 0)
			go r.renew(l, l.deadline)
		}
	}
	added := r.added
	r.added = false
	switch {
	case len(r.leases) > 0:
		r.wakeAt = r.leases[0].next
	case added:
		r.wakeAt = now.Add(r.every) // tick, while locks keep coming
	default:
		r.wakeAt = time.Time{}
		return time.Time{}, false
	}
	return r.wakeAt, true
}

// renew runs one renewal of l, on a goroutine counted by r.tasks.
func (r *renewer) renew(l *lease, deadline time.Time) {
	sent := time.Now()
	ok, err := l.owner.renew(deadline)
	r.tasks.done()

	r.mu.Lock()
	defer r.mu.Unlock()
	l.renewing = false
	now := time.Now()
	switch {
	case l.over:
		return
	case err == nil && ok:
		l.deadline = sent.Add(r.life)
		l.next = now.Add(r.every)
	case err == nil:
		heap.Remove(&r.leases, l.index)
		r.loseLocked(l)
		return
	case r.closed:
		heap.Remove(&r.leases, l.index)
		l.over = true
		return
	default:
		if !now.Before(l.deadline) {
			heap.Remove(&r.leases, l.index)
			r.loseLocked(l)
			return
		}
		l.next = now.Add(r.retry)
		if l.next.After(l.deadline) {
			l.next = l.deadline
		}
	}
	heap.Fix(&r.leases, l.index)
	r.wakeFor(l.next)
}

// loseLocked marks l lost, out of the heap, and tells its owner.
func (r *renewer) loseLocked(l *lease) {
	l.over, l.lost = true, true
	l.owner.lose()
}

// leaseHeap orders leases by next, for container/heap.
type leaseHeap []*lease

func (h leaseHeap) Len() int           { return len(h) }
func (h leaseHeap) Less(i, j int) bool { return h[i].next.Before(h[j].next) }
func (h leaseHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *leaseHeap) Push(x any) {
	l := x.(*lease)
	l.index = len(*h)
	*h = append(*h, l)
}

func (h *leaseHeap) Pop() any {
	old := *h
	n := len(old)
	l := old[n-1]
	old[n-1] = nil
	l.index = -1
	*h = old[:n-1]
	return l
}
