package main

// A wakeup is a coalescing signal from producers to one consumer: any number
// of notify calls between two receives leave exactly one pending wake-up.
// Because the buffer holds one token, notify never blocks and a wake-up is
// never lost: if the consumer is busy, the token waits for its next receive,
// and the consumer, once woken, looks at everything queued so far.
type wakeup chan struct{}

func newWakeup() wakeup { return make(wakeup, 1) }

// notify leaves a pending wake-up unless one is already pending.
func (w wakeup) notify() {
	select {
	case w <- struct{}{}:
	default:
	}
}
