package pgstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pacerkit/pacer/store"
)

// Claim implements store.Store: one statement that locks the key rows it
// leases, skipping those another transaction holds, updates them and
// commits before it returns. A lease whose TTL passed is leased again here,
// in its place in the ready order: when it lapsed.
func (s *Store) Claim(ctx context.Context, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	if err := s.checkClaim(ctx, queue, p); err != nil {
		return nil, 0, err
	}
	if p.KeyRate.On() {
		if err := s.sweep(ctx, queue); err != nil {
			return nil, 0, err
		}
	}
	if p.PerKey > 1 {
		return s.claimLanes(ctx, queue, p)
	}
	if on, err := s.fairQueue(ctx, queue); err != nil {
		return nil, 0, err
	} else if on {
		return s.claimFair(ctx, s.pool, queue, p)
	}
	return s.claim(ctx, s.pool, queue, p)
}

// checkClaim is what Claim checks before it reaches the server.
func (s *Store) checkClaim(ctx context.Context, queue string, p store.ClaimParams) error {
	if err := s.begin(ctx, queue); err != nil {
		return err
	}
	if p.Keys < 1 || p.MaxBatch < 0 || p.TTL <= 0 || p.PerKey < 0 {
		return fmt.Errorf("pgstore: ClaimParams needs Keys >= 1, MaxBatch >= 0, TTL > 0 and PerKey >= 0, got %+v", p)
	}
	if err := p.KeyRate.Validate(); err != nil {
		return fmt.Errorf("pgstore: %w", err)
	}
	return nil
}

// claim runs Claim's statement on q.
func (s *Store) claim(ctx context.Context, q querier, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	sql, args := s.claimStatement(queue, p)
	return s.claimOn(ctx, q, sql, queue, args)
}

// claimStatement returns Claim's statement and its arguments.
func (s *Store) claimStatement(queue string, p store.ClaimParams) (string, []any) {
	var maxBatch any // NULL: all
	if p.MaxBatch > 0 {
		maxBatch = int64(p.MaxBatch)
	}
	args := []any{queue, maxBatch, interval(p.TTL), bytesOf(p.Holder)}
	if p.KeyRate.On() {
		args = append(args, rateArgs(p.KeyRate)...)
	}
	return s.claimSQL(claimForm{keys: p.Keys, rated: p.KeyRate.On()}), args
}

// scanClaim reads the leases and the next of Claim's statement from rows.
func scanClaim(queue string, rows pgx.Rows) ([]store.Lease, time.Duration, error) {
	var (
		leases []store.Lease
		next   time.Duration
	)
	for rows.Next() {
		var (
			now      time.Time
			upcoming pgtype.Timestamptz
			found    bool
			l        = store.Lease{Queue: queue}
			key      []byte
		)
		if err := rows.Scan(&now, &upcoming, &found, &key, &l.Attempt, &l.Fence, &l.Values, &l.First); err != nil {
			return nil, 0, err
		}
		next = until(now, upcoming)
		if found {
			l.Key = string(key)
			leases = append(leases, l)
		}
	}
	return leases, next, rows.Err()
}

// claimForm is one of the claim statements: for up to keys keys, of a
// kind, the one of a shared Finish's transaction or not, and with a
// KeyRate or not (see claimSQL).
type claimForm struct {
	keys   int
	kind   claimKind
	shared bool
	rated  bool
}

// claimKind says which keys a claim statement leases.
type claimKind uint8

const (
	plainClaim      claimKind = iota // the oldest ready, in a queue without tenants
	fairClaim                        // a key per turn of the tenants (tenant.go)
	untenantedClaim                  // the oldest ready added without a tenant in a queue with tenants
)

// claimSQL returns the claim statement of form f, made once for each of
// the few forms a store's callers use.
func (s *Store) claimSQL(f claimForm) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sql, ok := s.claims[f]
	if !ok {
		switch {
		case f.kind == fairClaim && f.shared && f.rated:
			sql = s.tq.claimSharedRated
		case f.kind == fairClaim && f.rated:
			sql = s.tq.claimRated
		case f.kind == untenantedClaim && f.rated:
			sql = s.tq.claimNoneRated
		case f.shared && f.rated:
			sql = s.q.claimSharedRated
		case f.rated:
			sql = s.q.claimRated
		case f.kind == fairClaim && f.shared:
			sql = s.tq.claimShared
		case f.kind == fairClaim:
			sql = s.tq.claim
		case f.kind == untenantedClaim:
			sql = s.tq.claimNone
		case f.shared:
			sql = s.q.claimShared
		default:
			sql = s.q.claim
		}
		sql = strings.ReplaceAll(sql, "{keys}", strconv.Itoa(f.keys))
		if len(s.claims) < maxClaimSQL {
			s.claims[f] = sql
		}
	}
	return sql
}

// maxClaimSQL bounds the claim statements a store keeps.
const maxClaimSQL = 64

// claimOn runs the claim statement sql.
func (s *Store) claimOn(ctx context.Context, q querier, sql, queue string, args []any) ([]store.Lease, time.Duration, error) {
	rows, err := q.Query(ctx, sql, args...)
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
