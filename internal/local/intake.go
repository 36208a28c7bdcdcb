package local

import (
	"context"

	"github.com/pacerkit/pacer/debounce"
	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// Put implements engine.Engine. With Debounce, v joins its key's burst,
// which enters the key's queue when it closes (fired); with Adaptive, the
// burst opens with the quiet period of its moment and keeps it, so a key's
// bursts stay one at a time and in order.
func (e *Engine[K, V]) Put(_ context.Context, key K, v V) error {
	if e.draining.Load() {
		return engine.ErrClosed
	}
	if !e.reserve() {
		return store.ErrFull
	}
	var err error
	switch {
	case e.d == nil:
		err = e.putOrDelay(key, v)
	case e.cfg.Adaptive == nil:
		err = e.d.Add(key, v)
	default:
		// The quiet period applies only if v opens a burst, but reading it
		// every time also keeps the pressure up to date with the backlog.
		err = e.d.AddWait(key, v, e.cfg.Adaptive.WaitAt(e.clk.Now(), e.g.Len()))
	}
	if err != nil {
		e.release(1)
		return closed(err)
	}
	return nil
}

// fired queues a burst that closed; it runs on the debouncer's goroutine.
func (e *Engine[K, V]) fired(key K, b debounce.Burst[V]) {
	if e.dropping.Load() {
		e.release(len(b.Values))
		e.cfg.DropPending(key, b.Values)
		return
	}
	if err := e.g.Put(key, b.Values...); err != nil {
		e.left(key, b.Values) // closed while the bursts flushed
		return
	}
	if e.cfg.Ready != nil {
		e.cfg.Ready(key, len(b.Values), b.First)
	}
}
