package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/pacerkit/pacer/store"
)

// Extend implements store.Store.
func (s *Store) Extend(ctx context.Context, l store.Lease, ttl time.Duration) error {
	if err := s.begin(ctx, l.Queue); err != nil {
		return err
	}
	if ttl <= 0 {
		return fmt.Errorf("pgstore: Extend needs a positive ttl, got %v", ttl)
	}
	fence, ok := fenceOf(l)
	if !ok {
		return store.ErrLeaseLost
	}
	tag, err := s.pool.Exec(ctx, s.q.extend, l.Queue, bytesOf(l.Key), fence, interval(ttl))
	if err != nil {
		return failed(ctx, "Extend", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrLeaseLost
	}
	return nil
}

// Finish implements store.Store: one statement per outcome, which checks
// the lease and ends it. A Drop keeps the batch as a dead letter.
func (s *Store) Finish(ctx context.Context, l store.Lease, o store.Outcome) (bool, error) {
	if err := s.begin(ctx, l.Queue); err != nil {
		return false, err
	}
	if o.Kind < store.Ack || o.Kind > store.Hold {
		return false, fmt.Errorf("pgstore: unknown OutcomeKind %d", o.Kind)
	}
	fence, ok := fenceOf(l)
	if !ok {
		return false, store.ErrLeaseLost
	}
	key := bytesOf(l.Key)
	var (
		more, found bool
		err         error
	)
	switch o.Kind {
	case store.Ack:
		found, err = s.row(ctx, s.q.finishAck, []any{l.Queue, key, fence}, &more)
	case store.Drop:
		found, err = s.row(ctx, s.q.finishDrop, []any{l.Queue, key, fence, bytesOf(o.Err)}, &more)
	case store.Retry, store.Defer:
		found, err = s.changed(ctx, s.q.finishRetry, l.Queue, key, fence, o.Kind == store.Retry, interval(o.After))
		more = true
	case store.Hold:
		found, err = s.changed(ctx, s.q.finishHold, l.Queue, key, fence)
		more = true
	}
	if err != nil {
		return false, failed(ctx, "Finish", err)
	}
	if !found {
		return false, store.ErrLeaseLost
	}
	if more && o.Kind != store.Hold {
		s.notify(l.Queue) // the key may be ready before its lease would have lapsed
	}
	return more, nil
}

// Release implements store.Store.
func (s *Store) Release(ctx context.Context, queue, key string) (bool, error) {
	if err := s.begin(ctx, queue); err != nil {
		return false, err
	}
	found, err := s.changed(ctx, s.q.release, queue, bytesOf(key))
	if err != nil {
		return false, failed(ctx, "Release", err)
	}
	if found {
		s.notify(queue)
	}
	return found, nil
}

// row runs a statement that returns at most one row, scans it into dst (nil
// skips a column), and reports whether there was one.
func (s *Store) row(ctx context.Context, sql string, args []any, dst ...any) (bool, error) {
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	found := rows.Next()
	if found {
		if err := rows.Scan(dst...); err != nil {
			return false, err
		}
	}
	return found, rows.Err()
}

// changed runs a statement that changes at most one row, and reports
// whether it did.
func (s *Store) changed(ctx context.Context, sql string, args ...any) (bool, error) {
	tag, err := s.pool.Exec(ctx, sql, args...)
	return tag.RowsAffected() > 0, err
}
