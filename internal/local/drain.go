package local

import "context"

// Drain implements engine.Engine: the open bursts close at once, into
// their keys' queues or, with DropPending, to it; the values waiting for
// their time (PutAfter), and those behind them, go to Config.Left; the
// Groups shut down once nothing but held keys is left (see Get).
func (e *Engine[K, V]) Drain() {
	if e.d != nil {
		if e.cfg.DropPending != nil {
			e.dropping.Store(true)
		}
		// Flushing only runs fired, which never blocks, so Shutdown
		// returns promptly and needs no deadline.
		_ = e.d.Shutdown(context.Background())
	}
	e.draining.Store(true)
	e.leftDelayed(e.stopDelays())
	e.stopIfDrained()
}

// stopIfDrained shuts the Groups down once they hold nothing but held
// keys: Get then returns engine.ErrClosed to every worker.
func (e *Engine[K, V]) stopIfDrained() {
	if e.active() == 0 {
		e.g.ShutDown()
	}
}

// active returns the number of values a drain must still handle: every
// value except those of held keys.
func (e *Engine[K, V]) active() int {
	s := e.g.Stats()
	return s.Messages - s.HeldMessages
}

// Close implements engine.Engine: what is left goes to Config.Left.
func (e *Engine[K, V]) Close() {
	if e.d != nil {
		_ = e.d.Shutdown(context.Background())
	}
	lines := e.stopDelays()
	e.g.Close(e.left)
	e.leftDelayed(lines) // behind the values of their keys in the Groups
}

// left hands values the engine gives up to Config.Left.
func (e *Engine[K, V]) left(key K, vs []V) {
	e.release(len(vs))
	if e.cfg.Left != nil {
		e.cfg.Left(key, vs)
	}
}
