package fifo

import "sync"

// waitList parks blocked Get calls in arrival order. Its owner guards it
// with its own mutex. Each waiter has a one-slot channel, so a wake-up is
// never lost and never blocks the waker.
type waitList struct {
	list []chan struct{}
}

// wakeOne wakes the longest-waiting caller, if any.
func (l *waitList) wakeOne() {
	if len(l.list) == 0 {
		return
	}
	ch := l.list[0]
	l.list[0] = nil
	l.list = l.list[1:]
	ch <- struct{}{}
}

// wakeAll wakes every waiting caller.
func (l *waitList) wakeAll() {
	for len(l.list) > 0 {
		l.wakeOne()
	}
	l.list = nil
}

// wait parks the caller until it is woken or done closes. mu must be held;
// it is released while parked and held again on return. wait reports
// whether the caller was woken; false means done closed first.
func (l *waitList) wait(mu *sync.Mutex, done <-chan struct{}) bool {
	ch := make(chan struct{}, 1)
	l.list = append(l.list, ch)
	mu.Unlock()
	select {
	case <-ch:
		mu.Lock()
		return true
	case <-done:
		mu.Lock()
		if !l.remove(ch) {
			// Woken and cancelled at once: hand the wake-up on, so the
			// item it announced is not left with a parked caller.
			l.wakeOne()
		}
		return false
	}
}

// remove takes ch off the list and reports whether it was still there.
func (l *waitList) remove(ch chan struct{}) bool {
	for i, c := range l.list {
		if c == ch {
			copy(l.list[i:], l.list[i+1:])
			l.list[len(l.list)-1] = nil
			l.list = l.list[:len(l.list)-1]
			return true
		}
	}
	return false
}
