package local

// reserve takes room for one value under MaxValues, and reports whether
// there was some.
func (e *Engine[K, V]) reserve() bool {
	if e.cfg.MaxValues <= 0 {
		return true
	}
	if e.held.Add(1) > int64(e.cfg.MaxValues) {
		e.held.Add(-1)
		return false
	}
	return true
}

// release gives back the room of n values that left the engine.
func (e *Engine[K, V]) release(n int) {
	if e.cfg.MaxValues > 0 {
		e.held.Add(-int64(n))
	}
}
