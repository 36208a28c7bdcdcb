package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

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
		return s.extendLane(ctx, l, ttl)
	}
	return nil
}

// Finish implements store.Store: one statement per outcome, which checks
// the lease and ends it. A Drop keeps the batch as a dead letter. An Ack
// shares its statement and commit with the Acks of other callers that
// come at the same time (see sharedfinish.go).
func (s *Store) Finish(ctx context.Context, l store.Lease, o store.Outcome) (bool, error) {
	if err := s.checkFinish(ctx, l, o); err != nil {
		return false, err
	}
	if o.Kind == store.Ack {
		if a := s.ack(ctx, l, 0, store.ClaimParams{}, false); a.ended {
			return a.more, a.err
		}
	}
	more, err := s.finish(ctx, s.pool, l, o)
	if err != nil {
		return false, err
	}
	s.finished(l, o, more)
	return more, nil
}

// checkFinish is what Finish checks before it reaches the server.
func (s *Store) checkFinish(ctx context.Context, l store.Lease, o store.Outcome) error {
	if err := s.begin(ctx, l.Queue); err != nil {
		return err
	}
	if o.Kind < store.Ack || o.Kind > store.Hold {
		return fmt.Errorf("pgstore: unknown OutcomeKind %d", o.Kind)
	}
	if _, ok := fenceOf(l); !ok {
		return store.ErrLeaseLost
	}
	return nil
}

// finish runs Finish's statement on q, and returns store.ErrLeaseLost if
// it changed nothing.
func (s *Store) finish(ctx context.Context, q querier, l store.Lease, o store.Outcome) (bool, error) {
	st := s.finishStatement(l, o)
	var (
		more, found bool
		err         error
	)
	if st.returnsMore {
		found, err = row(ctx, q, st.sql, st.args, &more)
	} else {
		found, err = changed(ctx, q, st.sql, st.args...)
		more = true
	}
	if err != nil {
		return false, failed(ctx, "Finish", err)
	}
	if !found {
		if _, ok := q.(*pgxpool.Pool); !ok {
			return false, store.ErrLeaseLost // a caller's transaction, which finishes one lease
		}
		return s.finishLane(ctx, q, l, o)
	}
	return more, nil
}

// finishStatement is the statement that ends a lease as an outcome says.
type finishStatement struct {
	sql  string
	args []any
	// returnsMore: the statement returns a row, with more, if the lease
	// held; else it changes a row if the lease held, and more is true.
	returnsMore bool
}

// finishStatement returns the statement that ends l as o says.
func (s *Store) finishStatement(l store.Lease, o store.Outcome) finishStatement {
	fence, _ := fenceOf(l)
	key := bytesOf(l.Key)
	switch o.Kind {
	case store.Ack:
		return finishStatement{s.q.finishAck, []any{l.Queue, key, fence}, true}
	case store.Drop:
		return finishStatement{s.q.finishDrop, []any{l.Queue, key, fence, bytesOf(o.Err)}, true}
	case store.Retry, store.Defer:
		return finishStatement{s.q.finishRetry, []any{l.Queue, key, fence, o.Kind == store.Retry, interval(o.After), bytesOf(o.Err)}, false}
	default: // store.Hold
		return finishStatement{s.q.finishHold, []any{l.Queue, key, fence, bytesOf(o.Err)}, false}
	}
}

// finished notifies, once the Finish of l committed, if it may have made
// the key ready before its lease would have lapsed.
func (s *Store) finished(l store.Lease, o store.Outcome, more bool) {
	if more && o.Kind != store.Hold {
		s.notify(l.Queue)
	}
}

// Release implements store.Store.
func (s *Store) Release(ctx context.Context, queue, key string) (bool, error) {
	if err := s.begin(ctx, queue); err != nil {
		return false, err
	}
	found, err := changed(ctx, s.pool, s.q.release, queue, bytesOf(key))
	if err != nil {
		return false, failed(ctx, "Release", err)
	}
	if !found {
		if found, err = s.releaseLanes(ctx, queue, key); err != nil {
			return false, err
		}
	}
	if found && s.fair.known(queue) {
		if _, err := s.pool.Exec(ctx, s.tq.release, queue, bytesOf(key)); err != nil {
			return true, failed(ctx, "Release", err)
		}
	}
	if found {
		s.notify(queue)
	}
	return found, nil
}

// querier runs statements: the pool, each in a transaction of its own, or
// a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// row runs on q a statement that returns at most one row, scans it into
// dst (nil skips a column), and reports whether there was one.
//
// It reads the reply to its end before it reports success: PostgreSQL
// sends a statement's rows before its implicit transaction commits, and a
// commit that fails comes after them, as an error (a deferred constraint)
// or as the connection closing (a server stopped while the commit waited
// for the disk, which sends the rows it had buffered as it goes). Only the
// end of the reply says the statement committed.
func row(ctx context.Context, q querier, sql string, args []any, dst ...any) (bool, error) {
	rows, err := q.Query(ctx, sql, args...)
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
	rows.Close() // reads the rest of the reply, and its error if any
	return found, rows.Err()
}

// changed runs on q a statement that changes at most one row, and reports
// whether it did.
func changed(ctx context.Context, q querier, sql string, args ...any) (bool, error) {
	tag, err := q.Exec(ctx, sql, args...)
	return tag.RowsAffected() > 0, err
}
