package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer/store"
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
// channel and wakes the Waits of a queue when its payload comes. It is
// also the Store's poll: every interval, while Waits are in progress, it
// looks on that connection at when the next key of each of their queues
// is ready, all of them in one statement, and wakes the Waits of a queue
// that has a ready key, or when its next key is due. So a Store's idle
// cost is one statement per interval, however many Waits it has, and no
// round trip through the pool, whose connections a pool may check with one
// of their own before it lends them. It reconnects when the connection
// fails, waking every Wait then and once it listens again, since
// notifications sent meanwhile are lost.
type listener struct {
	pool    *pgxpool.Pool
	channel string
	look    string        // upcomingSQL
	every   time.Duration // Config.PollInterval
	cancel  context.CancelFunc
	done    chan struct{}

	mu        sync.Mutex
	waits     map[string]*waits // by payload
	listening bool
}

// waits is what the Waits of one payload share.
type waits struct {
	woken  chan struct{}  // closed at their next wake-up
	queues map[string]int // the queues they wait for, and how many Waits each
	due    time.Time      // when the last look saw their next key due; zero: not seen
}

// startListener starts the goroutine of a listener on channel, which looks
// at the queues of its Waits with the statement look every interval.
func startListener(pool *pgxpool.Pool, channel, look string, every time.Duration) *listener {
	ctx, cancel := context.WithCancel(context.Background())
	l := &listener{
		pool:    pool,
		channel: channel,
		look:    look,
		every:   every,
		cancel:  cancel,
		done:    make(chan struct{}),
		waits:   make(map[string]*waits),
	}
	go l.run(ctx)
	return l
}

// stop ends the listener and waits for its goroutine.
func (l *listener) stop() {
	l.cancel()
	<-l.done
}

// enter registers a Wait for queue. It returns a channel that is closed at
// the Wait's wake-up (a notification of queue's payload, a look that saw
// queue's next key ready or due, or a change of the connection), and
// whether the listener listens, and so looks at queue every interval. The
// Wait must call leave when it ends.
func (l *listener) enter(queue string) (woken <-chan struct{}, listening bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := payload(queue)
	w := l.waits[p]
	if w == nil {
		w = &waits{woken: make(chan struct{}), queues: make(map[string]int)}
		l.waits[p] = w
	}
	w.queues[queue]++
	return w.woken, l.listening
}

// leave unregisters a Wait for queue.
func (l *listener) leave(queue string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := payload(queue)
	w := l.waits[p]
	if w.queues[queue]--; w.queues[queue] == 0 {
		delete(w.queues, queue)
	}
	if len(w.queues) == 0 {
		delete(l.waits, p)
	}
}

// wake wakes the Waits of payload p.
func (l *listener) wake(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := l.waits[p]; w != nil {
		w.wake()
	}
}

// wake closes w's channel and starts the next.
func (w *waits) wake() {
	close(w.woken)
	w.woken = make(chan struct{})
	w.due = time.Time{}
}

// changed records whether the listener listens, and wakes every Wait: one
// that began while it did not listen, since it may sleep longer now; one
// that began while it did, since notifications may be lost now.
func (l *listener) changed(listening bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listening = listening
	for _, w := range l.waits {
		w.wake()
	}
}

// queues returns the queues that Waits wait for.
func (l *listener) queues() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var qs []string
	for _, w := range l.waits {
		for q := range w.queues {
			qs = append(qs, q)
		}
	}
	return qs
}

// saw records what a look found, at now: for each queue, how long until
// its next key is ready. The Waits of a queue with a ready key wake now,
// the others when the earliest of their queues' keys is due.
func (l *listener) saw(now time.Time, next map[string]time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range l.waits {
		var due time.Time
		for q := range w.queues {
			d, ok := next[q]
			if !ok || d == store.Never {
				continue
			}
			if t := now.Add(d); due.IsZero() || t.Before(due) {
				due = t
			}
		}
		if !due.IsZero() && !due.After(now) {
			w.wake()
			continue
		}
		w.due = due
	}
}

// wakeDue wakes the Waits whose due time came by now, and returns the
// earliest due time still to come, zero if none.
func (l *listener) wakeDue(now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var next time.Time
	for _, w := range l.waits {
		switch {
		case w.due.IsZero():
		case !w.due.After(now):
			w.wake()
		case next.IsZero() || w.due.Before(next):
			next = w.due
		}
	}
	return next
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
// notifications come and as its looks find keys ready, until ctx ends or
// the connection fails. It reports whether it got as far as listening.
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
	l.changed(true)
	defer l.changed(false)
	heard := time.Now() // the connection's last sign of life
	nextLook := heard.Add(l.every)
	for {
		at := nextLook
		if ping := heard.Add(listenerPing); ping.Before(at) {
			at = ping
		}
		if due := l.wakeDue(time.Now()); !due.IsZero() && due.Before(at) {
			at = due
		}
		quiet, cancel := context.WithDeadline(ctx, at)
		n, err := conn.WaitForNotification(quiet)
		cancel()
		switch {
		case err == nil:
			heard = time.Now()
			l.wake(n.Payload)
			continue
		case ctx.Err() != nil:
			return true
		case !errors.Is(err, context.DeadlineExceeded) || conn.IsClosed():
			return true
		}
		now := time.Now()
		var queues []string
		if !now.Before(nextLook) {
			nextLook = now.Add(l.every)
			queues = l.queues()
		}
		switch {
		case len(queues) > 0:
			if !l.lookAt(ctx, conn, queues) {
				return true
			}
		case now.Sub(heard) >= listenerPing:
			if !l.alive(ctx, conn) {
				return true
			}
		default:
			continue // a due time, whose Waits wakeDue wakes
		}
		heard = now
	}
}

// lookAt runs the look at queues on conn, and wakes their Waits as it
// finds. It reports whether the connection answered.
func (l *listener) lookAt(ctx context.Context, conn *pgx.Conn, queues []string) bool {
	ctx, cancel := context.WithTimeout(ctx, listenerPing/3)
	defer cancel()
	rows, err := conn.Query(ctx, l.look, queues)
	if err != nil {
		return false
	}
	next := make(map[string]time.Duration, len(queues))
	var (
		now      time.Time
		queue    string
		upcoming pgtype.Timestamptz
	)
	_, err = pgx.ForEachRow(rows, []any{&now, &queue, &upcoming}, func() error {
		next[queue] = until(now, upcoming)
		return nil
	})
	if err != nil {
		return false
	}
	l.saw(time.Now(), next)
	return true
}

// alive checks a connection that has been silent a while.
func (l *listener) alive(ctx context.Context, conn *pgx.Conn) bool {
	ping, cancel := context.WithTimeout(ctx, listenerPing/3)
	defer cancel()
	return conn.Ping(ping) == nil
}
