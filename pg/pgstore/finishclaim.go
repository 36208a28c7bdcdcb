package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/pacerkit/pacer/store"
)

var _ store.FinishClaimer = (*Store)(nil)

// FinishAndClaim implements store.FinishClaimer: Finish's statement, then
// Claim's, in one transaction, so that ending a batch and leasing the next
// cost one commit, where a Finish and a Claim commit twice. The transaction
// begins and runs both statements in one round trip, and ends in a second:
// it commits, or rolls back if the lease was lost, so that a lost lease
// changes nothing and claims nothing. The Claim's statement reads a
// snapshot taken after the Finish's, as a Claim right after the Finish
// would: the key that l leaves ready is behind the keys already waiting,
// and the Claim leases no value that the snapshot does not see.
func (s *Store) FinishAndClaim(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) (bool, []store.Lease, time.Duration, error) {
	if err := s.checkFinish(ctx, l, o); err != nil {
		return false, nil, 0, err
	}
	if err := s.checkClaim(ctx, l.Queue, p); err != nil {
		return false, nil, 0, err
	}
	if p.KeyRate.On() {
		if err := s.sweep(ctx, l.Queue); err != nil {
			return false, nil, 0, err
		}
	}
	fair := s.fair.known(l.Queue)
	if p.PerKey > 1 {
		return s.finishAndClaimLanes(ctx, l, o, p, fair)
	}
	if o.Kind == store.Ack {
		if a := s.ack(ctx, l, p.Keys, p, fair); a.ended {
			return a.more, a.leases, a.next, a.err
		}
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false, nil, 0, failed(ctx, "FinishAndClaim", err)
	}
	// A connection left inside the transaction, by an error, is closed
	// by the pool when released.
	defer conn.Release()
	var (
		more, found bool
		leases      []store.Lease
		next        time.Duration
		b           pgx.Batch
	)
	b.Queue("BEGIN")
	fin := s.finishStatement(l, o)
	if fin.returnsMore {
		b.Queue(fin.sql, fin.args...).Query(func(rows pgx.Rows) error {
			if found = rows.Next(); found {
				if err := rows.Scan(&more); err != nil {
					return err
				}
			}
			return rows.Err()
		})
	} else {
		b.Queue(fin.sql, fin.args...).Exec(func(tag pgconn.CommandTag) error {
			found, more = tag.RowsAffected() > 0, true
			return nil
		})
	}
	claimSQL, claimArgs := s.claimStatement(l.Queue, p)
	if fair {
		// A queue with tenants: the claim takes the tenants' next turns,
		// under the lock of the turns (see turnsLockSQL), taken after
		// the finish, which may wait for its key row: a claim of the
		// queue waits for no other row.
		b.Queue(turnsLockSQL, s.turnsLock(l.Queue))
		claimSQL = s.claimSQL(claimForm{keys: p.Keys, kind: fairClaim, rated: p.KeyRate.On()})
	}
	b.Queue(claimSQL, claimArgs...).Query(func(rows pgx.Rows) error {
		var err error
		leases, next, err = scanClaim(l.Queue, rows)
		return err
	})
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return false, nil, 0, failed(ctx, "FinishAndClaim", err)
	}
	if !found {
		if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
			return false, nil, 0, failed(ctx, "FinishAndClaim", err)
		}
		// A lease of a key of lanes, or lost (lanes.go), on the
		// connection held: the pool may have no other.
		more, err := s.finishLane(ctx, conn, l, o)
		if err != nil {
			return false, nil, 0, err
		}
		s.finished(l, o, more)
		if fair {
			leases, next, err = s.claimFair(ctx, conn, l.Queue, p)
		} else {
			leases, next, err = s.claim(ctx, conn, l.Queue, p)
		}
		return more, leases, next, err
	}
	if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
		return false, nil, 0, failed(ctx, "FinishAndClaim", err)
	}
	s.finished(l, o, more)
	return more, leases, next, nil
}
