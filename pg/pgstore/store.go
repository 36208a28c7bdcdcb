package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer/store"
)

var (
	_ store.Store       = (*Store)(nil)
	_ store.DeadLetters = (*Store)(nil)
	_ store.TxAdder     = (*Store)(nil)
)

// Store is the store.Store that keeps its state in PostgreSQL, shared by
// every process that uses the same database and schema. See the package
// doc for how it keeps the store package's guarantees.
//
// Store is safe for concurrent use. Create one with New and end it with
// Close; the zero value is not usable.
type Store struct {
	pool    *pgxpool.Pool
	cfg     Config
	q       queries
	tq      tenantQueries // the statements of queues with tenants
	fair    fairCache     // which queues have tenants
	channel string        // the channel of the schema's notifications
	slot    atomic.Uint32 // turns through the slots of the queues' counts (see countAddSQL)

	mu     sync.Mutex
	claims map[claimForm]string // made by claimSQL
	ln     *listener            // started by the first Wait
	nt     *notifier            // started by the first change to notify
	closed chan struct{}

	acks      sync.Mutex // guards ackQueues
	ackQueues map[ackGroup]*ackQueue

	sweeps sweeps // of key_rates (keyrate.go)
}

// New returns a Store on pool, whose connections it borrows for one
// statement at a time. It brings the schema up to date first: it creates
// the schema and runs the migrations it has not run yet (see the package
// doc), which is safe when several processes start at once. The pool stays
// the caller's: Close does not close it.
func New(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Store, error) {
	if pool == nil {
		return nil, errors.New("pgstore: New needs a pool, got nil")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	schema := pgx.Identifier{cfg.Schema}.Sanitize()
	if err := migrate(ctx, pool, schema); err != nil {
		return nil, fmt.Errorf("pgstore: migrating schema %s: %w", schema, err)
	}
	s := &Store{
		pool:    pool,
		cfg:     cfg,
		q:       newQueries(schema),
		tq:      newTenantQueries(schema, newQueries(schema)),
		channel: cfg.Schema + channelSuffix,
		claims:  make(map[claimForm]string),
		closed:  make(chan struct{}),

		ackQueues: make(map[ackGroup]*ackQueue),
	}
	s.slot.Store(rand.Uint32()) // processes start at different slots
	return s, nil
}

// Close ends the store: it sends the notifications still pending, closes
// the connection its Waits listen on, and waits for the goroutines that own
// them. Every method then returns store.ErrClosed, and Waits in progress
// return it too. Close does not close the pool, and calling it again does
// nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return nil
	default:
	}
	close(s.closed)
	ln, nt := s.ln, s.nt
	s.mu.Unlock()
	if nt != nil {
		nt.stop()
	}
	if ln != nil {
		ln.stop()
	}
	return nil
}

// notify wakes the Waits of queue, in every process, once the statement
// that changed it committed. The store's own Waits wake at once, in the
// caller's goroutine: the notification would reach them a round trip
// later, and later still when the notifier paces its statements (see
// notifyEvery). They hear it too, which is only a spurious wake-up for a
// Wait that began since.
func (s *Store) notify(queue string) {
	p := payload(queue)
	s.mu.Lock()
	if s.nt == nil {
		select {
		case <-s.closed: // the change is made; only its hint is lost
			s.mu.Unlock()
			return
		default:
		}
		s.nt = startNotifier(s.pool, s.q.notify, s.channel)
	}
	nt, ln := s.nt, s.ln
	s.mu.Unlock()
	if ln != nil {
		ln.wake(p)
	}
	nt.send(p)
}

// begin is what every method does first: it returns ctx.Err() for a ctx
// that ended, store.ErrClosed once the store is closed, and an error for a
// queue name that PostgreSQL's text cannot hold.
func (s *Store) begin(ctx context.Context, queue string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-s.closed:
		return store.ErrClosed
	default:
	}
	if !utf8.ValidString(queue) || strings.IndexByte(queue, 0) >= 0 {
		return fmt.Errorf("pgstore: queue name %q is not valid UTF-8 without NUL", queue)
	}
	return nil
}

// failed wraps err, which a statement of op returned, unless it is the
// caller's ctx ending.
func failed(ctx context.Context, op string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return ctxErr
	}
	return fmt.Errorf("pgstore: %s: %w", op, err)
}

// bytesOf returns s as bytes for a bytea parameter, never nil, which would
// be NULL.
func bytesOf(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}

// interval returns d as an interval parameter: nil (NULL, never) for
// store.Never, else d rounded up to the microsecond, the server's
// resolution, so that nothing is due before d has passed. A negative d is
// 0.
func interval(d time.Duration) any {
	const us = time.Microsecond
	switch {
	case d >= store.Never-us:
		return nil
	case d <= 0:
		return time.Duration(0)
	}
	return (d + us - 1) / us * us
}

// fenceOf returns l.Fence as the bigint it is stored as, and false for a
// fence that no lease ever had.
func fenceOf(l store.Lease) (int64, bool) {
	if l.Fence == 0 || l.Fence > math.MaxInt64 {
		return 0, false
	}
	return int64(l.Fence), true
}

// until returns how long from now until t: 0 if t has passed, store.Never
// if t is NULL or infinite.
func until(now time.Time, t pgtype.Timestamptz) time.Duration {
	if !t.Valid || t.InfinityModifier == pgtype.Infinity {
		return store.Never
	}
	if t.InfinityModifier == pgtype.NegativeInfinity {
		return 0
	}
	return max(t.Time.Sub(now), 0)
}
