package pgstore

import (
	"context"
	"hash/fnv"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Only a change that a Wait may be sleeping through is notified. Under
// load no worker waits, and the notifications would cost the server and
// every listening process work for nothing, the more the more processes
// there are, since each notification goes to every one of them.
//
// Whether a Wait sleeps is told by two advisory locks per queue (watchKeys):
//
//   - the mark, which every Wait of the queue holds in shared mode while
//     it sleeps, on a connection it keeps meanwhile;
//   - the gate, which a notifying statement (Add, Finish, a flight of
//     Acks) holds in shared mode until its commit, and which a Wait, once
//     it holds the mark, takes in exclusive mode and lets go at once: so
//     it waits for the statements that held the gate to commit.
//
// The statement takes the gate first, then tries the mark in exclusive
// mode and lets it go at once (unwatchedSQL). If it gets both, no Wait
// held the mark; one that takes it later waits at the gate for the
// statement's commit, and reads the queue's next ready time after it, so
// it sees the change: the statement need not notify. If it misses either
// lock, a Wait may sleep, or another statement's check or a Wait's pass
// through the gate held it for a moment: it notifies, to be safe.
// Statements hold the gate in shared mode, so they never wait for each
// other, nor for a Wait, which holds it only for an instant.
//
// AddTx, Release and Redrive always notify: AddTx would hold the gate for
// as long as the caller's transaction, and the other two are rare.

// watchKeys returns the advisory lock keys of queue on channel: the gate
// and the mark. They are FNV-1a hashes, so that they are the same in every
// process; another use of advisory locks in the database that picks one
// of them by chance makes this Store notify when it need not, and no more.
func watchKeys(channel, queue string) (gate, mark int64) {
	key := func(kind string) int64 {
		h := fnv.New64a()
		h.Write([]byte("pgstore\x00" + channel + "\x00" + kind + "\x00" + payload(queue)))
		return int64(h.Sum64())
	}
	return key("gate"), key("mark")
}

// unwatchedSQL is true if no Wait sleeps on the queue, with the gate then
// held until the statement's transaction ends (see above). CASE keeps the
// order: the gate, then the mark. {gate} and {mark} stand for the
// statement's parameters of the two keys.
const unwatchedSQL = `CASE
	WHEN NOT pg_try_advisory_xact_lock_shared({gate}::bigint) THEN false
	WHEN NOT pg_try_advisory_lock({mark}::bigint) THEN false
	ELSE pg_advisory_unlock({mark}::bigint) END`

// watchSQL is what a Wait runs before it reads the queue's next ready
// time, in the same batch, on the connection it keeps while it sleeps:
// the mark, then a pass through the gate.
//
// $1 gate, $2 mark.
const watchSQL = `SELECT pg_advisory_lock_shared($2::bigint), pg_advisory_lock($1::bigint), pg_advisory_unlock($1::bigint)`

// unwatchSQL lets go of the mark.
//
// $1 mark.
const unwatchSQL = `SELECT pg_advisory_unlock_shared($1::bigint)`

// A watch is a Wait's hold on its queue's mark, on a connection of the
// pool that it keeps until end.
type watch struct {
	conn *pgxpool.Conn
	mark int64
}

// end lets go of the mark and gives the connection back. If that fails,
// or the session did not hold the mark, the connection is closed rather
// than given back, so that the session, and any mark it holds, ends.
func (w *watch) end(ctx context.Context) {
	var held bool
	if err := w.conn.QueryRow(ctx, unwatchSQL, w.mark).Scan(&held); err != nil || !held {
		_ = w.conn.Conn().Close(ctx)
	}
	w.conn.Release()
}

// unwatch ends w on a goroutine of its own, so that the Wait returns
// without that round trip; Close waits for it.
func (s *Store) unwatch(w *watch) {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		defer cancel()
		w.end(ctx)
		return
	default:
	}
	s.unwatching.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.unwatching.Done()
		defer cancel()
		w.end(ctx)
	}()
}
