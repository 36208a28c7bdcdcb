package pgstore

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// notifier sends the notifications of the store's own statements, from a
// goroutine of its own, soon after the statements committed: a
// transaction that notifies holds a lock of the whole PostgreSQL cluster
// from before its commit until it ends, so a notifying Add or Finish would
// commit, and wait for the disk, one at a time with every other. Sent
// apart, in a transaction that writes nothing, a notification holds the
// lock for a moment, and the notifications that came meanwhile, one per
// queue, share one statement. A notification that is lost (a failed
// statement, a process that dies first) is a hint lost: Waits still find
// the work when they poll.
type notifier struct {
	pool    *pgxpool.Pool
	sql     string
	channel string
	cancel  context.CancelFunc
	done    chan struct{}
	kick    chan struct{} // holds a token while notifications are pending

	mu      sync.Mutex
	pending map[string]struct{} // payloads
}

// notifyTimeout bounds one statement of a notifier, and its last one when
// the store closes.
const notifyTimeout = 5 * time.Second

// notifyEvery is the least time between two statements of a notifier: the
// first change after a quiet spell is announced at once, and the changes
// that come within notifyEvery of a statement are announced together at
// its end. So a notification comes at most notifyEvery late, and a Store
// whose changes keep coming wakes the Waits of every process, which costs
// the server and each listening process some work, at most 200 times a
// second.
const notifyEvery = 5 * time.Millisecond

// startNotifier starts the goroutine of a notifier on channel.
func startNotifier(pool *pgxpool.Pool, sql, channel string) *notifier {
	ctx, cancel := context.WithCancel(context.Background())
	n := &notifier{
		pool:    pool,
		sql:     sql,
		channel: channel,
		cancel:  cancel,
		done:    make(chan struct{}),
		kick:    make(chan struct{}, 1),
		pending: make(map[string]struct{}),
	}
	go n.run(ctx)
	return n
}

// send asks for a notification with payload p.
func (n *notifier) send(p string) {
	n.mu.Lock()
	n.pending[p] = struct{}{}
	n.mu.Unlock()
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// stop sends what is pending, ends the notifier and waits for its
// goroutine.
func (n *notifier) stop() {
	n.cancel()
	<-n.done
}

// run sends the pending notifications whenever there are some, at most
// once per notifyEvery, until ctx ends; then it sends those still pending.
func (n *notifier) run(ctx context.Context) {
	defer close(n.done)
	pace := time.NewTimer(0)
	defer pace.Stop()
	for {
		select {
		case <-n.kick:
		case <-ctx.Done():
			n.last()
			return
		}
		select {
		case <-pace.C:
		case <-ctx.Done():
			n.last()
			return
		}
		n.flush(ctx)
		pace.Reset(notifyEvery)
	}
}

// last sends the notifications still pending when the notifier stops.
func (n *notifier) last() {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	n.flush(ctx)
}

// flush sends the pending notifications in one statement.
func (n *notifier) flush(ctx context.Context) {
	n.mu.Lock()
	payloads := make([]string, 0, len(n.pending))
	for p := range n.pending {
		payloads = append(payloads, p)
	}
	clear(n.pending)
	n.mu.Unlock()
	if len(payloads) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	_, _ = n.pool.Exec(ctx, n.sql, n.channel, payloads) // a hint: see notifier
}
