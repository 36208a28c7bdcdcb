package pgrate

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pacerkit/pacer/internal/timing"
)

// A sweeper deletes the rows of idle buckets, SweepBatch rows at most per
// statement (queries.sweep), walking the table in the order of its
// primary key from where its last sweep stopped, and from the start again
// once it reached the end. So no sweep reads the whole table, and
// repeated sweeps visit every row.
type sweeper struct {
	pool  *pgxpool.Pool
	q     *queries
	every time.Duration // < 0: only when asked (Keyed.Sweep)
	nanos timing.Nanos
	next  atomic.Int64 // nanos reading when the next sweep is due

	mu     sync.Mutex // one sweep at a time, which moves the cursor
	cursor rowKey     // where the next sweep starts
}

// rowKey is a row's primary key; the zero value (with empty, not nil,
// slices) comes before every row.
type rowKey struct {
	name  []byte
	keyed bool
	key   []byte
}

var start = rowKey{name: []byte{}, key: []byte{}}

func newSweeper(pool *pgxpool.Pool, s *shape, every time.Duration) *sweeper {
	if every == 0 {
		every = DefaultSweepEvery
	}
	w := &sweeper{pool: pool, q: s.q, every: every, nanos: s.nanos, cursor: start}
	w.next.Store(timing.AddNanos(s.nanos.Now(), every))
	return w
}

// due reports whether a sweep is due, and if so, claims it: of the calls
// that come while one is due, one gets true.
func (w *sweeper) due() bool {
	if w.every < 0 {
		return false
	}
	next, now := w.next.Load(), w.nanos.Now()
	return now >= next && w.next.CompareAndSwap(next, timing.AddNanos(now, w.every))
}

// run sweeps once and returns how many rows it deleted.
func (w *sweeper) run(ctx context.Context) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last rowKey
	var read, gone int64
	err := w.pool.QueryRow(ctx, w.q.sweep, w.cursor.name, w.cursor.keyed, w.cursor.key, SweepBatch).
		Scan(&last.name, &last.keyed, &last.key, &read, &gone)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		w.cursor = start
		return 0, nil
	case err != nil:
		return 0, err
	case read < SweepBatch: // the end of the table: start again
		w.cursor = start
	default: // from the last row read, which may stay
		w.cursor = last
	}
	return int(gone), nil
}
