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
	key, pl := bytesOf(l.Key), payload(l.Queue)
	var (
		more, found bool
		err         error
	)
	switch o.Kind {
	case store.Ack:
		found, err = s.row(ctx, s.q.finishAck, []any{l.Queue, key, fence, s.channel, pl}, &more, nil)
	case store.Drop:
		found, err = s.row(ctx, s.q.finishDrop, []any{l.Queue, key, fence, s.channel, pl, bytesOf(o.Err)}, &more, nil)
	case store.Retry, store.Defer:
		found, err = s.row(ctx, s.q.finishRetry, []any{l.Queue, key, fence, o.Kind == store.Retry, interval(o.After), s.channel, pl}, nil)
		more = true
	case store.Hold:
		tag, e := s.pool.Exec(ctx, s.q.finishHold, l.Queue, key, fence)
		found, err, more = tag.RowsAffected() > 0, e, true
	}
	if err != nil {
		return false, failed(ctx, "Finish", err)
	}
	if !found {
		return false, store.ErrLeaseLost
	}
	return more, nil
}

// Release implements store.Store.
func (s *Store) Release(ctx context.Context, queue, key string) (bool, error) {
	if err := s.begin(ctx, queue); err != nil {
		return false, err
	}
	found, err := s.row(ctx, s.q.release, []any{queue, bytesOf(key), s.channel, payload(queue)}, nil)
	if err != nil {
		return false, failed(ctx, "Release", err)
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
