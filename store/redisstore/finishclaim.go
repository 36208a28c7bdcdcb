package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/pacerkit/pacer/store"
)

var _ store.FinishClaimer = (*Store)(nil)

// FinishAndClaim ends l as o says and claims ready keys of its queue with p,
// in one script and one round trip; see store.FinishClaimer.
func (s *Store) FinishAndClaim(ctx context.Context, l store.Lease, o store.Outcome, p store.ClaimParams) (bool, []store.Lease, time.Duration, error) {
	n, err := s.names(ctx, l.Queue)
	if err != nil {
		return false, nil, 0, err
	}
	switch {
	case o.Kind < store.Ack || o.Kind > store.Hold:
		return false, nil, 0, fmt.Errorf("redisstore: Finish with unknown outcome kind %d", o.Kind)
	case p.Keys < 1:
		return false, nil, 0, fmt.Errorf("redisstore: ClaimParams.Keys is %d, want at least 1", p.Keys)
	case p.MaxBatch < 0:
		return false, nil, 0, fmt.Errorf("redisstore: ClaimParams.MaxBatch is %d, want 0 or more", p.MaxBatch)
	case p.TTL <= 0:
		return false, nil, 0, fmt.Errorf("redisstore: ClaimParams.TTL is %v, want more than 0", p.TTL)
	}
	r, err := s.run(ctx, finishClaimScript, n, n.key(l.Key), l.Key, strconv.FormatUint(l.Fence, 10), int(o.Kind), micros(o.After), o.Err,
		p.Keys, p.MaxBatch, micros(p.TTL)).Slice()
	if err != nil {
		return false, nil, 0, wrap("finish and claim", err)
	}
	if len(r) == 0 {
		return false, nil, 0, wrap("finish and claim", errors.New("empty reply"))
	}
	more, _ := r[0].(int64)
	if more < 0 {
		return false, nil, 0, store.ErrLeaseLost
	}
	ls, next, err := parseClaim(l.Queue, r[1:])
	if err != nil {
		return false, nil, 0, wrap("finish and claim", err)
	}
	return more == 1, ls, next, nil
}
