package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// maxPayload bounds a notification's payload, well below PostgreSQL's 8000
// bytes.
const maxPayload = 1000

// payload is what the statements of queue send on the channel: the queue's
// name, cut at maxPayload bytes. Queues whose names share that much of a
// prefix wake each other's Waits, which is only spurious.
func payload(queue string) string {
	if len(queue) <= maxPayload {
		return queue
	}
	n := maxPayload
	for n > 0 && !utf8.RuneStart(queue[n]) {
		n--
	}
	return queue[:n]
}

// The listener's pace: how long it lets its connection be silent before it
// checks it, and how long it waits before connecting again, at most.
const (
	listenerPing    = 30 * time.Second
	listenerBackoff = 5 * time.Second
)

// listener is a Store's listening connection: a goroutine that owns one
// connection, taken from the pool for good, listens on the schema's
// channel and wakes the Waits of a queue when its payload comes. It
// reconnects when the connection fails, and wakes every Wait once it
// listens again, since notifications sent meanwhile are lost.
type listener struct {
	pool    *pgxpool.Pool
	channel string
	cancel  context.CancelFunc
	done    chan struct{}

	mu      sync.Mutex
	waiting map[string]chan struct{} // by payload; closed by its next notification
}

// startListener starts the goroutine of a listener on channel.
func startListener(pool *pgxpool.Pool, channel string) *listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{
		pool:    pool,
		channel: channel,
		cancel:  cancel,
		done:    make(chan struct{}),
		waiting: make(map[string]chan struct{}),
	}
	go l.run(ctx)
	return l
}

// stop ends the listener and waits for its goroutine.
func (l *listener) stop() {
	l.cancel()
	<-l.done
}

// changed returns a channel that is closed when payload p comes next, or
// when the listener (re)starts listening.
func (l *listener) changed(p string) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ch := l.waiting[p]
	if ch == nil {
		ch = make(chan struct{})
		l.waiting[p] = ch
	}
	return ch
}

// wake closes the channel of payload p.
func (l *listener) wake(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ch := l.waiting[p]; ch != nil {
		close(ch)
		delete(l.waiting, p)
	}
}

// wakeAll closes every channel.
func (l *listener) wakeAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for p, ch := range l.waiting {
		close(ch)
		delete(l.waiting, p)
	}
}

// run listens until ctx ends, connecting again after each failure.
func (l *listener) run(ctx context.Context) {
	defer close(l.done)
	pause := 50 * time.Millisecond
	for {
		listened := l.listen(ctx)
		if ctx.Err() != nil {
			return
		}
		if listened {
			pause = 50 * time.Millisecond
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, listenerBackoff)
	}
}

// listen runs one connection: it listens, then wakes Waits as
// notifications come, until ctx ends or the connection fails. It reports
// whether it got as far as listening.
func (l *listener) listen(ctx context.Context) bool {
	c, err := l.pool.Acquire(ctx)
	if err != nil {
		return false
	}
	conn := c.Hijack()
	defer func() {
		closing, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = conn.Close(closing)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{l.channel}.Sanitize()); err != nil {
		return false
	}
	l.wakeAll()
	for {
		quiet, cancel := context.WithTimeout(ctx, listenerPing)
		n, err := conn.WaitForNotification(quiet)
		cancel()
		switch {
		case err == nil:
			l.wake(n.Payload)
		case ctx.Err() != nil:
			return true
		case errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			if !l.alive(ctx, conn) {
				return true
			}
		default:
			return true
		}
	}
}

// alive checks a connection that has been silent a while.
func (l *listener) alive(ctx context.Context, conn *pgx.Conn) bool {
	ping, cancel := context.WithTimeout(ctx, listenerPing/3)
	defer cancel()
	return conn.Ping(ping) == nil
}
