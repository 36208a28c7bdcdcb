package redismutex

import "sync"

// tasks counts the goroutines a Locker runs (its renewals and its Pub/Sub
// receiver), so that Close waits for them, and refuses new ones once
// closed.
type tasks struct {
	mu     sync.Mutex // orders wg.Add against close's wg.Wait
	closed bool
	wg     sync.WaitGroup
}

// start counts a task about to run, or reports false once closed.
func (t *tasks) start() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	return true
}

// done ends a task that start counted.
func (t *tasks) done() { t.wg.Done() }

// close refuses new tasks and reports whether it was the first call; wait
// waits for those that run.
func (t *tasks) close() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := !t.closed
	t.closed = true
	return first
}

func (t *tasks) wait() { t.wg.Wait() }
