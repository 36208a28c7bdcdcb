package pgstore

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/pacerkit/pacer/store"
)

// DeadLetters implements store.DeadLetters. IDs come from one identity
// column of the schema, so they grow across all queues; a dead letter whose
// dropping transaction commits after a later one's may be missed by a
// reader paging past it meanwhile. A limit below 1 returns none.
func (s *Store) DeadLetters(ctx context.Context, queue string, after uint64, limit int) ([]store.DeadLetter, error) {
	if err := s.begin(ctx, queue); err != nil {
		return nil, err
	}
	if limit < 1 || after >= math.MaxInt64 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, s.q.deadLetters, queue, int64(after), int64(limit))
	if err != nil {
		return nil, failed(ctx, "DeadLetters", err)
	}
	defer rows.Close()
	var out []store.DeadLetter
	for rows.Next() {
		var (
			d        store.DeadLetter
			key, why []byte
		)
		if err := rows.Scan(&d.ID, &key, &d.Values, &why, &d.Attempt, &d.At); err != nil {
			return nil, failed(ctx, "DeadLetters", err)
		}
		d.Key, d.Err = string(key), string(why)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, failed(ctx, "DeadLetters", err)
	}
	return out, nil
}

// Redrive implements store.DeadLetters: one statement, which removes the
// dead letter and adds its values as Add does with a zero AddParams. Like
// Add, it refuses a key whose SHA-256 another key of the queue has, and
// then keeps the dead letter (see the package doc).
func (s *Store) Redrive(ctx context.Context, queue string, id uint64) (bool, error) {
	if err := s.begin(ctx, queue); err != nil {
		return false, err
	}
	if id == 0 || id > math.MaxInt64 {
		return false, nil
	}
	var redriven, woke bool
	found, err := row(ctx, s.pool, s.q.redrive, []any{queue, int64(id)}, &redriven, &woke)
	if err != nil {
		return false, failed(ctx, "Redrive", err)
	}
	if found && !redriven {
		return false, fmt.Errorf("pgstore: Redrive: another key of queue %q has the SHA-256 of dead letter %d's key and has values; the dead letter is kept", queue, id)
	}
	if woke {
		s.notify(queue)
	}
	return found, nil
}

// Purge implements store.DeadLetters.
func (s *Store) Purge(ctx context.Context, queue string, before time.Time) (int, error) {
	if err := s.begin(ctx, queue); err != nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, s.q.purge, queue, before)
	if err != nil {
		return 0, failed(ctx, "Purge", err)
	}
	return int(tag.RowsAffected()), nil
}
