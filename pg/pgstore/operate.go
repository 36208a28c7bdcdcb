package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pacerkit/pacer/store"
)

var _ store.Operator = (*Store)(nil)

// PauseQueue implements store.Operator: one statement, which adds the
// queue to the schema's paused queues. Every claim statement, of every
// process, reads that table by its primary key once, and leases nothing
// of a queue in it; Wait's look at the queue then finds nothing due, so
// that Waits sleep until ResumeQueue or their d.
func (s *Store) PauseQueue(ctx context.Context, queue string) (bool, error) {
	return s.operate(ctx, "PauseQueue", queue, s.q.pauseQueue, false, queue)
}

// ResumeQueue implements store.Operator: one statement, and then a
// notification that wakes the Waits of every process.
func (s *Store) ResumeQueue(ctx context.Context, queue string) (bool, error) {
	return s.operate(ctx, "ResumeQueue", queue, s.q.resumeQueue, true, queue)
}

// QueuePaused implements store.Operator: one statement, which reads the
// queue's row of the paused queues by its primary key.
func (s *Store) QueuePaused(ctx context.Context, queue string) (bool, error) {
	if err := s.begin(ctx, queue); err != nil {
		return false, err
	}
	var paused bool
	if err := s.pool.QueryRow(ctx, s.q.queuePaused, queue).Scan(&paused); err != nil {
		return false, failed(ctx, "QueuePaused", err)
	}
	return paused, nil
}

// PauseKey implements store.Operator: one statement, which marks the key's
// row, or makes an empty one for a key without values, which then keeps
// the pause. A paused key has no place in the index that claims read, so
// a paused key costs the claims nothing, however long it waits. It
// returns an error, and changes nothing, if another key of the queue with
// the same SHA-256 has values or is paused (see Names in the package doc).
func (s *Store) PauseKey(ctx context.Context, queue, key string) (bool, error) {
	if err := s.begin(ctx, queue); err != nil {
		return false, err
	}
	var paused, other bool
	if _, err := row(ctx, s.pool, s.q.pauseKey, []any{queue, bytesOf(key)}, &paused, &other); err != nil {
		return false, failed(ctx, "PauseKey", err)
	}
	if other {
		return false, fmt.Errorf("pgstore: PauseKey: another key of queue %q has the SHA-256 of this key (%d bytes) and has values or is paused; nothing was changed", queue, len(key))
	}
	return paused, nil
}

// ResumeKey implements store.Operator: one statement, and then a
// notification that wakes the Waits of every process.
func (s *Store) ResumeKey(ctx context.Context, queue, key string) (bool, error) {
	if err := s.begin(ctx, queue); err != nil {
		return false, err
	}
	found, err := row(ctx, s.pool, s.q.resumeKey, []any{queue, bytesOf(key)})
	if err != nil {
		return false, failed(ctx, "ResumeKey", err)
	}
	if found {
		s.notify(queue)
	}
	return found, nil
}

// RetryNow implements store.Operator: one statement, and then a
// notification that wakes the Waits of every process; for a key of lanes
// (lanes.go), one more.
func (s *Store) RetryNow(ctx context.Context, queue, key string) (bool, error) {
	done, err := s.operate(ctx, "RetryNow", queue, s.q.retryNow, true, queue, bytesOf(key))
	if err != nil || done {
		return done, err
	}
	return s.retryLanes(ctx, queue, key)
}

// DropKey implements store.Operator: two statements in one transaction,
// sent in one round trip. The first locks the key's row, so that it waits
// for an Add, Claim or Finish of the key in flight; the second, whose
// snapshot is taken after that lock, and so sees every value of the key,
// moves its values to a dead letter, takes them off the queue's count,
// and removes the row, or empties it if the key is paused: the lease that
// was out, if any, is gone with it. O(log n + values).
func (s *Store) DropKey(ctx context.Context, queue, key, reason string) (int, error) {
	if err := s.begin(ctx, queue); err != nil {
		return 0, err
	}
	var (
		b pgx.Batch
		n int64
	)
	b.Queue(s.q.lockKey, queue, bytesOf(key)).Exec(func(pgconn.CommandTag) error { return nil })
	b.Queue(s.q.foldLanes, queue, bytesOf(key)).Exec(func(pgconn.CommandTag) error { return nil })
	b.Queue(s.q.dropKey, queue, bytesOf(key), bytesOf(reason)).QueryRow(func(row pgx.Row) error { return row.Scan(&n) })
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return 0, failed(ctx, "DropKey", err)
	}
	return int(n), nil
}

// operate runs op's statement sql, which changes at most one row, and
// reports whether it did; if it did and wake is set, it then wakes the
// Waits of queue in every process.
func (s *Store) operate(ctx context.Context, op, queue, sql string, wake bool, args ...any) (bool, error) {
	if err := s.begin(ctx, queue); err != nil {
		return false, err
	}
	done, err := changed(ctx, s.pool, sql, args...)
	if err != nil {
		return false, failed(ctx, op, err)
	}
	if done && wake {
		s.notify(queue)
	}
	return done, nil
}
