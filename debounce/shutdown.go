package debounce

import (
	"context"

	"github.com/pacerkit/pacer/internal/sched"
)

// Shutdown stops the debouncer gracefully: Add returns ErrClosed from then
// on, every open burst fires at once, in deadline order, and Shutdown waits
// until those fires have returned and the goroutine has exited. If ctx ends
// first it returns ctx.Err(); the fires go on, and a later Shutdown or Close
// waits for them again.
//
// Shutdown and Close may be called more than once and together; the first
// call decides whether open bursts fire or are discarded. Neither may be
// called from fire, which they wait for.
func (k *Keyed[K, V]) Shutdown(ctx context.Context) error {
	k.stop(true)
	return k.awaitStop(ctx)
}

// Close stops the debouncer at once: Add returns ErrClosed from then on and
// the bursts whose deadline has not come yet are discarded. Bursts that are
// due, or were handed over by Flush, a full MaxItems burst or a Leading
// value, still fire: Close waits for those fires, which do not block, and
// for the goroutine to exit. It returns nil; the error makes Keyed an
// io.Closer.
func (k *Keyed[K, V]) Close() error {
	k.stop(false)
	return k.awaitStop(context.Background())
}

// stop stops intake and hands over the open bursts that are due, or all of
// them with flush. Only the first call does anything.
func (k *Keyed[K, V]) stop(flush bool) {
	k.mu.Lock()
	if !k.closed {
		k.closed = true
		now := k.nanos()
		for key, e := range k.entries {
			if e.seq() == 0 {
				continue
			}
			if d := k.deadline(key, e); flush || d <= now {
				k.handOver(key, e, d, e.seq())
			}
		}
		k.entries = nil
		k.heap = sched.Heap[ref[K, V]]{}
		k.ext = nil
		k.fifo = keyQueue[K]{}
		k.open = 0
	}
	k.mu.Unlock()
	k.loop.Wake()
}

// awaitStop waits for the fires that stop handed over and for the goroutine.
func (k *Keyed[K, V]) awaitStop(ctx context.Context) error {
	select {
	case <-k.drained:
	default:
		select {
		case <-k.drained:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	k.loop.Stop()
	return nil
}
