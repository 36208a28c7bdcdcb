package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pacerkit/pacer/store"
)

// Add implements store.Store: one statement, committed before it returns.
// If the key became ready sooner, the Store then notifies the Waits of
// every process (see the package doc).
func (s *Store) Add(ctx context.Context, queue, key string, vals [][]byte, p store.AddParams) error {
	if err := s.begin(ctx, queue); err != nil {
		return err
	}
	sql, args, err := s.add(queue, key, vals, p, nil)
	if err != nil || sql == "" {
		return err
	}
	var woke bool
	if _, err := row(ctx, s.pool, sql, args, &woke, nil); err != nil {
		return failed(ctx, "Add", err)
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
func (s *Store) AddTx(ctx context.Context, tx any, queue, key string, vals [][]byte, p store.AddParams) error {
	ptx, ok := tx.(pgx.Tx)
	if !ok {
		return fmt.Errorf("pgstore: AddTx needs a pgx.Tx, got %T", tx)
	}
	if err := s.begin(ctx, queue); err != nil {
		return err
	}
	sql, args, err := s.add(queue, key, vals, p, s.channel)
	if err != nil || sql == "" {
		return err
	}
	if _, err := ptx.Exec(ctx, sql, args...); err != nil {
		return failed(ctx, "AddTx", err)
	}
	return nil
}

// add returns the statement of an Add and its arguments; no statement for
// no values. The statement notifies channel itself unless it is nil.
func (s *Store) add(queue, key string, vals [][]byte, p store.AddParams, channel any) (string, []any, error) {
	if p.Wait < 0 || p.MaxWait < 0 {
		return "", nil, fmt.Errorf("pgstore: AddParams.Wait and MaxWait must be >= 0, got %v and %v", p.Wait, p.MaxWait)
	}
	if len(vals) == 0 {
		return "", nil, nil
	}
	vals = notNull(vals)
	if p.Wait == 0 {
		return s.q.addReady, []any{queue, bytesOf(key), vals, channel, payload(queue)}, nil
	}
	var maxWait any // NULL: no bound
	if p.MaxWait > 0 {
		maxWait = interval(p.MaxWait)
	}
	return s.q.addBurst, []any{queue, bytesOf(key), vals, interval(p.Wait), maxWait, channel, payload(queue)}, nil
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
