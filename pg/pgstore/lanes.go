package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pacerkit/pacer/store"
)

// A key that a claim with ClaimParams.PerKey > 1 leases keeps its batches
// out, or come back, as rows of lanes (migration 009), with the server's
// functions there: lease_free_lanes_v2 (018, which runs lease_lanes of
// 014 for keys with lanes; claim_lanes of 009 in a queue with tenants),
// finish_lane, extend_lane, release_lanes.
// The statements of a key of one lease never find a lease of such a key
// (its row has no leased_until, and claimSQL skips it), so a Finish or an
// Extend of a lease that its statement did not find tries the lane of its
// fence: a lease of one lease at a time pays nothing for lanes, and a lost
// lease one more round trip.

// claimLanes is Claim with PerKey > 1.
func (s *Store) claimLanes(ctx context.Context, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	var maxBatch any // NULL: all
	if p.MaxBatch > 0 {
		maxBatch = int64(p.MaxBatch)
	}
	fair, err := s.fairQueue(ctx, queue)
	if err != nil {
		return nil, 0, err
	}
	sql := s.q.claimLanes
	args := []any{queue, p.Keys, maxBatch, interval(p.TTL), bytesOf(p.Holder), p.PerKey}
	switch rated := p.KeyRate.On(); {
	case fair && rated:
		sql, args = s.q.claimLanesFairRated, append(args, rateArgs(p.KeyRate)...)
	case fair:
		sql = s.q.claimLanesFair
	case rated:
		sql, args = s.q.claimLanesRated, append(args, rateArgs(p.KeyRate)...)
	}
	if fair {
		return s.claimLanesFair(ctx, queue, sql, args)
	}
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, 0, failed(ctx, "Claim", err)
	}
	defer rows.Close()
	leases, next, err := scanClaim(queue, rows)
	if err != nil {
		return nil, 0, failed(ctx, "Claim", err)
	}
	return leases, next, nil
}

// claimLanesFair runs claimLanes' statement sql in a queue with tenants
// after the lock of the queue's turns (turnsLockSQL), in one transaction
// and round trip, as claimFair does: pick_tenant's SKIP LOCKED alone would
// let two claims at once each pass the tenant the other holds and take a
// later turn.
func (s *Store) claimLanesFair(ctx context.Context, queue, sql string, args []any) ([]store.Lease, time.Duration, error) {
	var (
		leases []store.Lease
		next   time.Duration
		b      pgx.Batch
	)
	b.Queue(turnsLockSQL, s.turnsLock(queue))
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		var err error
		leases, next, err = scanClaim(queue, rows)
		return err
	})
	if err := s.pool.SendBatch(ctx, &b).Close(); err != nil {
		return nil, 0, failed(ctx, "Claim", err)
	}
	return leases, next, nil
}

// finishAndClaimLanes is FinishAndClaim with PerKey > 1. An Ack goes in
// a flight of Acks of lanes (sharedfinish.go): one round trip and one
// commit for the flight's Acks and their claim. Any other outcome, and an
// Ack that no flight ended (a lost lease, a key row locked, a lease of a
// key of one lease), is a Finish, then a Claim.
func (s *Store) finishAndClaimLanes(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams, fair bool) (bool, []store.Lease, time.Duration, error) {
	if o.Kind == store.Ack {
		if a := s.ack(ctx, l, p.Keys, p, fair); a.ended {
			return a.more, a.leases, a.next, a.err
		}
	}
	more, err := s.finish(ctx, s.pool, l, o)
	if err != nil {
		return false, nil, 0, err
	}
	s.finished(l, o, more)
	leases, next, err := s.claimLanes(ctx, l.Queue, p)
	return more, leases, next, err
}

// finishLane ends the lane of l as o says, on q, after the statement of a key
// of one lease found no lease of l; store.ErrLeaseLost if it finds none
// either.
func (s *Store) finishLane(ctx context.Context, q querier, l store.Lease, o store.Outcome) (bool, error) {
	fence, _ := fenceOf(l)
	var delay any
	if o.Kind == store.Retry || o.Kind == store.Defer {
		delay = interval(o.After)
	}
	var more bool
	found, err := row(ctx, q, s.q.finishLane, []any{l.Queue, bytesOf(l.Key), fence, int(o.Kind), delay, bytesOf(o.Err)}, &more)
	if err != nil {
		return false, failed(ctx, "Finish", err)
	}
	if !found {
		return false, store.ErrLeaseLost
	}
	return more, nil
}

// extendLane renews the lane of l, after extendSQL found no lease of l.
func (s *Store) extendLane(ctx context.Context, l store.Lease, ttl time.Duration) error {
	fence, _ := fenceOf(l)
	var ok bool
	if err := s.pool.QueryRow(ctx, s.q.extendLane, l.Queue, bytesOf(l.Key), fence, interval(ttl)).Scan(&ok); err != nil {
		return failed(ctx, "Extend", err)
	}
	if !ok {
		return store.ErrLeaseLost
	}
	return nil
}

// releaseLanes releases a held key of lanes, after releaseSQL found no
// held key of one lease.
func (s *Store) releaseLanes(ctx context.Context, queue, key string) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, s.q.releaseLanes, queue, bytesOf(key)).Scan(&ok); err != nil {
		return false, failed(ctx, "Release", err)
	}
	return ok, nil
}

// retryLanes is RetryNow of a key of lanes, after retryNowSQL changed
// nothing.
func (s *Store) retryLanes(ctx context.Context, queue, key string) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, s.q.retryLanes, queue, bytesOf(key)).Scan(&ok); err != nil {
		return false, failed(ctx, "RetryNow", err)
	}
	if ok {
		s.notify(queue)
	}
	return ok, nil
}

// The statements that call the functions of lanes. {schema} stands for
// the store's quoted schema.
const (
	claimLanesSQL = `SELECT * FROM {schema}.lease_free_lanes_v2($1, $2, $3, $4, $5, $6)`
	// claimLanesFairSQL is claimLanesSQL in a queue with tenants, whose
	// leases each take a tenant's turn (migration 009).
	claimLanesFairSQL = `SELECT * FROM {schema}.claim_lanes($1, $2, $3, $4, $5, $6, true)`
	finishLaneSQL     = `SELECT more FROM {schema}.finish_lane($1, $2, $3, $4, $5, $6, {removeSlot} + pg_backend_pid() % {addSlots})`
	extendLaneSQL     = `SELECT {schema}.extend_lane($1, $2, $3, $4)`
	releaseLanesSQL   = `SELECT {schema}.release_lanes($1, $2)`
	// foldLanesSQL comes between lockKeySQL and dropKeySQL in DropKey.
	foldLanesSQL  = `SELECT {schema}.fold_lanes($1, $2, {removeSlot} + pg_backend_pid() % {addSlots})`
	retryLanesSQL = `SELECT {schema}.retry_lanes($1, $2)`
	// finishLanesSQL and claimLanesSharedSQL are a flight of Acks of
	// lanes (migrations 012, 014, 016 and 018, sharedfinish.go): the claim
	// leases as many keys as the Acks of the lanes that the finish ended
	// want.
	finishLanesSQL          = `SELECT i, more FROM {schema}.ack_last_lanes_v2($1, $2, $3, $4, {removeSlot} + pg_backend_pid() % {addSlots})`
	claimLanesSharedSQL     = `SELECT * FROM {schema}.lease_free_lanes_v2($1, current_setting('pgstore.leases')::integer, $2, $3, $4, $5)`
	claimLanesFairSharedSQL = `SELECT * FROM {schema}.claim_lanes($1, current_setting('pgstore.leases')::integer, $2, $3, $4, $5, true)`
	// The claims above with a KeyRate: its interval and tolerance come
	// last (migration 015).
	claimLanesRatedSQL           = `SELECT * FROM {schema}.lease_lanes_rated($1, $2, $3, $4, $5, $6, $7, $8)`
	claimLanesFairRatedSQL       = `SELECT * FROM {schema}.claim_lanes_rated($1, $2, $3, $4, $5, $6, true, $7, $8)`
	claimLanesSharedRatedSQL     = `SELECT * FROM {schema}.lease_lanes_rated($1, current_setting('pgstore.leases')::integer, $2, $3, $4, $5, $6, $7)`
	claimLanesFairSharedRatedSQL = `SELECT * FROM {schema}.claim_lanes_rated($1, current_setting('pgstore.leases')::integer, $2, $3, $4, $5, true, $6, $7)`
)

var _ store.PerKeyClaimer = (*Store)(nil)

// ClaimsPerKey implements store.PerKeyClaimer.
func (s *Store) ClaimsPerKey() bool { return true }
