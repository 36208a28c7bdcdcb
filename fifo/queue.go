package fifo

import (
	"context"
	"sync"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/pacerkit/pacer/internal/timing"
)

// QueueConfig configures a Queue.
type QueueConfig struct {
	// Clock drives AddAfter. The default is clock.New(), the real clock,
	// which also follows the fake time of testing/synctest bubbles.
	Clock clock.Clock
}

// A Queue is a de-duplicated, first-come-first-served ready-queue of keys
// with per-key exclusivity, following the contract of client-go's
// workqueue:
//
//   - A key is waiting at most once: adding a waiting key again is a no-op.
//   - A key handed out by Get is processing until Done, and is not handed
//     out again before. Adding a processing key marks it dirty; Done then
//     appends it at the tail, so work that arrived during processing runs
//     again afterwards without jumping ahead of other keys.
//   - Keys come out in the order they became ready (waiting), whatever the
//     number of consumers.
//
// Every key returned by Get must be passed to Done. A Queue is safe for
// concurrent use. The zero value is not usable: create a Queue with
// NewQueue, and end it with ShutDown or ShutDownWithDrain, which stop the
// timer goroutine that AddAfter starts.
type Queue[K comparable] struct {
	mu         sync.Mutex
	keys       map[K]keyState
	ready      ring[K]
	pushed     uint64 // keys ever pushed to ready
	popped     uint64 // keys ever popped from ready
	processing int
	waiters    waitList
	delay      delayer[K]
	shut       bool
	drained    chan struct{} // closed once shut down with nothing waiting or processing
	drainDone  bool
	cut        chan struct{} // closed by ShutDown to end the pending ShutDownWithDrain calls
}

// keyState is the state of a key that is queued or delayed. A queued key
// is waiting while its position in the ready ring has not been popped yet,
// and processing after, so Get need not touch the map at all.
type keyState struct {
	pos   uint64 // value of pushed when the key was pushed, with flagQueued
	due   int64  // deadline of a pending AddAfter, with flagDelayed
	flags uint8
}

const (
	flagQueued  uint8 = 1 << iota // waiting or processing
	flagDirty                     // processing and added again
	flagDelayed                   // an AddAfter is pending
)

// NewQueue returns an empty Queue. It starts no goroutine until the first
// AddAfter with a positive delay.
func NewQueue[K comparable](cfg QueueConfig) *Queue[K] {
	return &Queue[K]{
		keys:  make(map[K]keyState),
		delay: newDelayer[K](timing.From(cfg.Clock)),
	}
}

// Add makes key ready. It reports whether the call changed anything: true
// when key became waiting, or when key is processing and was not yet dirty
// (it will be handed out once more after Done). It returns false when key is
// already waiting, already dirty, or the queue is shut down.
func (q *Queue[K]) Add(key K) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shut {
		return false
	}
	return q.add(key)
}

func (q *Queue[K]) add(key K) bool {
	s := q.keys[key]
	switch {
	case s.flags&flagQueued == 0:
		s.flags |= flagQueued
		s.pos = q.push(key)
	case s.pos >= q.popped || s.flags&flagDirty != 0:
		return false // waiting, or processing and already dirty
	default:
		s.flags |= flagDirty
	}
	q.keys[key] = s
	return true
}

// push appends key to the ready ring and returns its position.
func (q *Queue[K]) push(key K) uint64 {
	q.ready.push(key)
	q.pushed++
	q.waiters.wakeOne()
	return q.pushed - 1
}

// AddAfter adds key once d has passed, on the queue's clock. A d <= 0 adds
// at once; a d too long for the clock to add, up to math.MaxInt64, never
// comes due. If key already has a pending AddAfter, the earlier deadline wins.
// A pending AddAfter is dropped by ShutDown. Adding the key directly in the
// meantime does not cancel it; when it fires it is an ordinary Add.
func (q *Queue[K]) AddAfter(key K, d time.Duration) {
	if d <= 0 {
		q.Add(key)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shut {
		return
	}
	at := q.delay.deadline(d)
	s := q.keys[key]
	if s.flags&flagDelayed != 0 && s.due <= at {
		return
	}
	s.flags |= flagDelayed
	s.due = at
	q.keys[key] = s
	q.delay.push(key, at, q.fire)
}

// fire runs on the timer goroutine and adds the keys whose delay is over.
func (q *Queue[K]) fire(now time.Time) (time.Time, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.delay.due(now, func(key K, at int64) {
		s, ok := q.keys[key]
		if !ok || s.flags&flagDelayed == 0 || s.due != at || q.shut {
			return // superseded by an earlier deadline, or shut down
		}
		s.flags &^= flagDelayed
		if s.flags == 0 {
			delete(q.keys, key)
		} else {
			q.keys[key] = s
		}
		q.add(key)
	})
}

// Get removes the first waiting key and marks it processing; the caller must
// call Done with it. Get blocks while no key is waiting. Once the queue is
// shut down, Get still hands out the keys left waiting, then returns
// ErrClosed. If ctx ends first, Get returns ctx.Err() and the queue is
// unchanged.
func (q *Queue[K]) Get(ctx context.Context) (K, error) {
	var zero K
	done := ctx.Done()
	if done != nil {
		select {
		case <-done:
			return zero, ctx.Err()
		default:
		}
	}
	q.mu.Lock()
	for {
		if key, ok := q.ready.pop(); ok {
			q.popped++
			q.processing++
			q.mu.Unlock()
			return key, nil
		}
		if q.shut {
			q.mu.Unlock()
			return zero, ErrClosed
		}
		if !q.waiters.wait(&q.mu, done) {
			q.mu.Unlock()
			return zero, ctx.Err()
		}
	}
}

// Done marks key as no longer processing. If key was added while it was
// processing, it becomes waiting again, at the tail. Done panics if key is
// not processing.
func (q *Queue[K]) Done(key K) {
	q.mu.Lock()
	s, ok := q.keys[key]
	if !ok || s.flags&flagQueued == 0 || s.pos >= q.popped {
		q.mu.Unlock()
		panic("fifo: Queue.Done of a key that is not processing")
	}
	q.processing--
	if s.flags&flagDirty != 0 {
		s.flags &^= flagDirty
		s.pos = q.push(key)
	} else {
		s.flags &^= flagQueued
	}
	if s.flags == 0 {
		delete(q.keys, key)
	} else {
		q.keys[key] = s
	}
	q.checkDrained()
	q.mu.Unlock()
}

// Len returns the number of waiting keys. Keys that are processing, dirty
// or only pending an AddAfter are not counted.
func (q *Queue[K]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ready.len()
}

// Processing returns the number of keys handed out by Get and not yet Done.
func (q *Queue[K]) Processing() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.processing
}

// ShutDown stops intake and waits for the timer goroutine to end. After it,
// Add and AddAfter are no-ops and pending AddAfter calls never fire; keys
// already waiting, and dirty keys re-added by Done, are still handed out by
// Get, which returns ErrClosed once none is waiting. Callers blocked in
// Get with nothing waiting return ErrClosed. ShutDown also forces every
// ShutDownWithDrain waiting at that moment to return, without waiting for
// the drain, as client-go's does: a program that drains on a first signal
// can exit on a second. ShutDown is idempotent.
func (q *Queue[K]) ShutDown() {
	q.mu.Lock()
	q.shutDown()
	if q.cut != nil {
		close(q.cut)
		q.cut = nil
	}
	q.mu.Unlock()
	q.stopLoop()
}

// shutDown stops intake. The caller holds the lock.
func (q *Queue[K]) shutDown() {
	if !q.shut {
		q.shut = true
		q.waiters.wakeAll()
		q.checkDrained()
	}
}

// stopLoop ends the timer goroutine, if one was started, and waits for it.
func (q *Queue[K]) stopLoop() {
	q.mu.Lock()
	loop := q.delay.loop
	q.mu.Unlock()
	if loop != nil {
		loop.Stop()
	}
}

// ShutDownWithDrain shuts the queue down like ShutDown, then waits until no
// key is waiting or processing: consumers must keep calling Get and Done
// until Get returns ErrClosed. It returns nil once drained. If ShutDown
// is called meanwhile it returns ErrClosed at once, and if ctx ends first
// it returns ctx.Err(); either way the queue stays shut down and keeps
// draining, and a later ShutDownWithDrain waits again.
func (q *Queue[K]) ShutDownWithDrain(ctx context.Context) error {
	q.mu.Lock()
	q.shutDown()
	drained := q.drainedChan()
	if q.cut == nil && !q.drainDone {
		q.cut = make(chan struct{})
	}
	cut := q.cut
	q.mu.Unlock()
	q.stopLoop()
	return waitDrain(ctx, drained, cut)
}

func (q *Queue[K]) drainedChan() chan struct{} {
	if q.drained == nil {
		q.drained = make(chan struct{})
		q.checkDrained()
	}
	return q.drained
}

// checkDrained closes drained once the shut-down queue is empty. Nothing can
// be added after that: only Done of a processing key re-adds.
func (q *Queue[K]) checkDrained() {
	if q.shut && q.drained != nil && !q.drainDone && q.ready.len() == 0 && q.processing == 0 {
		q.drainDone = true
		close(q.drained)
	}
}
