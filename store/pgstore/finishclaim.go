package pgstore

import (
	"context"
	"time"

	"github.com/pacerkit/pacer/store"
)

var _ store.FinishClaimer = (*Store)(nil)

// FinishAndClaim implements store.FinishClaimer: Finish's statement, then
// Claim's, in one transaction, so that ending a batch and leasing the next
// cost one commit, where a Finish and a Claim commit twice. The Claim's
// statement reads a snapshot taken after the Finish's, as a Claim right
// after the Finish would: the key that l leaves ready is behind the keys
// already waiting, and the Claim leases no value that the snapshot does not
// see. A lost lease rolls the transaction back, so it changes nothing and
// claims nothing.
func (s *Store) FinishAndClaim(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) (bool, []store.Lease, time.Duration, error) {
	if err := s.checkFinish(ctx, l, o); err != nil {
		return false, nil, 0, err
	}
	if err := s.checkClaim(ctx, l.Queue, p); err != nil {
		return false, nil, 0, err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return false, nil, 0, failed(ctx, "FinishAndClaim", err)
	}
	defer func() { _ = tx.Rollback(ctx) }() // after Commit, does nothing
	more, err := s.finish(ctx, tx, l, o)
	if err != nil {
		return false, nil, 0, err
	}
	leases, next, err := s.claim(ctx, tx, l.Queue, p)
	if err != nil {
		return false, nil, 0, err
	}
	if err := tx.Commit(ctx); err != nil {
		return false, nil, 0, failed(ctx, "FinishAndClaim", err)
	}
	s.finished(l, o, more)
	return more, leases, next, nil
}
