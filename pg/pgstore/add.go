package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pacerkit/pacer/store"
)

// Add implements store.Store: one statement, committed before it returns.
// If the key became ready sooner, the Store then notifies the Waits of
// every process (see the package doc). It returns an error, and adds
// nothing, if another key of the queue with the same SHA-256 has values
// (see Names in the package doc); so does AddTx.
//
// The statement counts the values in the queue's count, which is spread
// over rows so that Adds without a bound do not wait for one another: the
// Adds of a Store take the rows in turn, so that Adds in flight at once
// share one only past 32. An Add with p.MaxValues locks every row of the
// count that Adds write, to read it whole, and so waits for the Adds of
// the queue in flight, and they for it: bounded Adds of a queue take
// turns, as they must to share one bound. Acks and Drops take values off
// the count in rows of their own, which an Add does not lock.
func (s *Store) Add(ctx context.Context, queue, key string, vals [][]byte, p store.AddParams) error {
	if err := s.begin(ctx, queue); err != nil {
		return err
	}
	// Adds in flight at once count in different slots of the count.
	slot := int32(s.slot.Add(1) % addSlots)
	sql, args, err := s.add(queue, key, vals, p, nil, slot)
	if err != nil || sql == "" {
		return err
	}
	var woke, added, refused bool
	if _, err := row(ctx, s.pool, sql, args, &woke, nil, &added, &refused); err != nil {
		return failed(ctx, "Add", err)
	}
	if err := addRefused("Add", queue, key, added, refused); err != nil {
		return err
	}
	if woke {
		s.notify(queue)
	}
	return nil
}

// AddTx implements store.TxAdder: it is Add inside the caller's
// transaction tx, which must be a pgx.Tx (from pgx.Conn.Begin,
// pgxpool.Pool.Begin or pgx.BeginFunc, say): the values exist if and only
// if tx commits, so that a service can store a change and the work it
// calls for in one commit (the outbox pattern). For anything else,
// nil included, it returns an error naming the type it got and changes
// nothing: a pool or a connection outside a transaction would commit the
// values on their own, which is Add's job. It sends one statement on tx and
// nothing else: no savepoint, no round trip of its own beyond that
// statement. The statement notifies the Waits of every process, which
// PostgreSQL does when tx commits; a tx that rolls back leaves no trace.
// That notification makes tx's commit take PostgreSQL's notification lock,
// which notifying transactions of the whole cluster take in turn.
//
// The statement locks the key's row until tx ends: another AddTx or Add of
// that key waits for it, a worker's Finish of that key too, and Claim
// skips the key meanwhile. Keep such transactions short, and add to keys
// in a consistent order when one transaction adds to several, as with any
// row PostgreSQL locks. A worker that finds such a key ready and cannot
// lease it tries again at once, and keeps trying while tx lasts. An error
// from AddTx's statement leaves tx aborted, as any failed statement does.
//
// It also locks the row of the queue's count that it wrote (see Add)
// until tx ends: the Adds of the queue from the sessions that share that
// row (one in 32) wait for tx, and so do the bounded Adds. With
// p.MaxValues it locks every row of the count that Adds write: every Add
// of the queue waits for tx, which holds its room until it ends (and
// leaves it if tx rolls back). Acks and Drops never wait for it. When the
// bound refuses the values, AddTx returns store.ErrFull and leaves tx as
// it was, usable.
func (s *Store) AddTx(ctx context.Context, tx any, queue, key string, vals [][]byte, p store.AddParams) error {
	ptx, ok := tx.(pgx.Tx)
	if !ok {
		return fmt.Errorf("pgstore: AddTx needs a pgx.Tx, got %T", tx)
	}
	if err := s.begin(ctx, queue); err != nil {
		return err
	}
	sql, args, err := s.add(queue, key, vals, p, s.channel, nil)
	if err != nil || sql == "" {
		return err
	}
	var added, refused bool
	if _, err := row(ctx, ptx, sql, args, nil, nil, &added, &refused); err != nil {
		return failed(ctx, "AddTx", err)
	}
	return addRefused("AddTx", queue, key, added, refused)
}

// addRefused is the error of op's statement when it did not add the
// values: an error saying so if it refused them because key's row is
// another key's, one of queue with the same SHA-256, which has values (see
// the package doc); else store.ErrFull, the bound's refusal.
func addRefused(op, queue, key string, added, refused bool) error {
	switch {
	case refused:
		return fmt.Errorf("pgstore: %s: another key of queue %q has the SHA-256 of this key (%d bytes) and has values; nothing was changed", op, queue, len(key))
	case !added:
		return store.ErrFull
	}
	return nil
}

// add returns the statement of an Add and its arguments; no statement for
// no values. The statement notifies channel itself unless it is nil, and
// counts the values of an Add without a bound in slot, or in its session's
// slot if slot is nil: the statements of one transaction must use one.
func (s *Store) add(queue, key string, vals [][]byte, p store.AddParams, channel, slot any) (string, []any, error) {
	if p.Wait < 0 || p.MaxWait < 0 || p.MaxValues < 0 {
		return "", nil, fmt.Errorf("pgstore: AddParams.Wait, MaxWait and MaxValues must be >= 0, got %v, %v and %d", p.Wait, p.MaxWait, p.MaxValues)
	}
	if err := p.ValidateDelay(); err != nil {
		return "", nil, err
	}
	if err := store.ValidateTenant(p); err != nil {
		return "", nil, err
	}
	if len(vals) == 0 {
		return "", nil, nil
	}
	if p.Tenant != "" {
		s.fair.set(queue, true)
	}
	fair := p.Tenant != "" || s.fair.known(queue)
	vals = notNull(vals)
	var bound any // NULL: no bound
	if p.MaxValues > 0 {
		bound = int64(p.MaxValues)
	}
	if p.Delay > 0 {
		if fair {
			return s.tq.addDelayed, []any{queue, bytesOf(key), vals, interval(p.Delay), channel, payload(queue), bound, slot, p.Tenant, int32(p.Weight)}, nil
		}
		return s.q.addDelayed, []any{queue, bytesOf(key), vals, interval(p.Delay), channel, payload(queue), bound, slot}, nil
	}
	if p.Wait == 0 {
		if fair {
			return s.tq.addReady, []any{queue, bytesOf(key), vals, channel, payload(queue), bound, slot, p.Tenant, int32(p.Weight)}, nil
		}
		return s.q.addReady, []any{queue, bytesOf(key), vals, channel, payload(queue), bound, slot}, nil
	}
	var maxWait any // NULL: no bound
	if p.MaxWait > 0 {
		maxWait = interval(p.MaxWait)
	}
	if fair {
		return s.tq.addBurst, []any{queue, bytesOf(key), vals, interval(p.Wait), maxWait, channel, payload(queue), bound, slot, p.Tenant, int32(p.Weight)}, nil
	}
	return s.q.addBurst, []any{queue, bytesOf(key), vals, interval(p.Wait), maxWait, channel, payload(queue), bound, slot}, nil
}

// notNull returns vals with every nil value made empty, since a nil one
// would be NULL; it copies vals only if it has one.
func notNull(vals [][]byte) [][]byte {
	for i, v := range vals {
		if v == nil {
			out := make([][]byte, len(vals))
			copy(out, vals)
			for j := i; j < len(out); j++ {
				if out[j] == nil {
					out[j] = []byte{}
				}
			}
			return out
		}
	}
	return vals
}
