package redismutex

import (
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// listen starts the Locker's subscription to the releases of locks that
// someone waits for, unless it runs already. The receiver wakes every
// waiter once subscribed, and again whenever it subscribes anew after a
// failure: a release published meanwhile was missed.
func (m *Locker) listen() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.sub != nil || !m.tasks.start() {
		return
	}
	m.sub = m.c.Subscribe(m.ctx)
	go m.receive(m.sub)
}

// healthEvery is how long the receiver waits for a message before it
// checks that its connection answers a PING.
func (m *Locker) healthEvery() time.Duration { return max(m.ttl, time.Second) }

// receive subscribes sub and dispatches what it receives until Close. On
// a silent connection it sends a PING; when that goes unanswered, or the
// connection fails, it starts over on a new subscription, after a
// backoff.
func (m *Locker) receive(sub *redis.PubSub) {
	defer m.tasks.done()
	var pinged bool
	backoff := newBackoff()
	subscribed := false
	for !m.closed.Load() {
		if !subscribed {
			if err := sub.Subscribe(m.ctx, m.released); err != nil {
				if sub = m.resubscribe(sub, &backoff); sub == nil {
					return
				}
				continue
			}
			subscribed = true
		}
		msg, err := sub.ReceiveTimeout(m.ctx, m.healthEvery())
		switch msg := msg.(type) {
		case *redis.Message:
			m.wake(msg.Payload)
		case *redis.Subscription:
			m.wakeAll()
		}
		var ne net.Error
		switch {
		case err == nil:
			pinged = false
			backoff = newBackoff()
		case !pinged && errors.As(err, &ne) && ne.Timeout():
			pinged = true
			_ = sub.Ping(m.ctx)
		default:
			pinged, subscribed = false, false
			if sub = m.resubscribe(sub, &backoff); sub == nil {
				return
			}
		}
	}
}

// resubscribe replaces sub by a new subscription after a backoff, or
// returns nil once the Locker is closed.
func (m *Locker) resubscribe(sub *redis.PubSub, b *backoff) *redis.PubSub {
	_ = sub.Close()
	t := time.NewTimer(b.next())
	defer t.Stop()
	select {
	case <-t.C:
	case <-m.ctx.Done():
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed.Load() {
		return nil
	}
	m.sub = m.c.Subscribe(m.ctx)
	return m.sub
}

// backoff doubles a delay from 10 ms up to a second.
type backoff struct{ d time.Duration }

func newBackoff() backoff { return backoff{d: 10 * time.Millisecond} }

func (b *backoff) next() time.Duration {
	d := b.d
	b.d = min(2*b.d, time.Second)
	return d
}
