package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pacerkit/pacer/store"
)

// Claim leases up to p.Keys ready keys in one script, after folding the
// Adds of the inbox and moving into the ready order the bursts, delayed
// batches and lapsed leases that came due; see store.Store. Each key
// keeps p.Holder and the time of its lease, for Key and Keys.
func (s *Store) Claim(ctx context.Context, queue string, p store.ClaimParams) ([]store.Lease, time.Duration, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return nil, 0, err
	}
	if err := checkClaim(p); err != nil {
		return nil, 0, err
	}
	args := []any{q.prefix, p.Keys, p.MaxBatch, micros(p.TTL), p.Holder}
	if p.KeyRate.On() {
		args = keyRateArgs(append(args, perKey(p)), p.KeyRate)
	} else if p.PerKey > 1 {
		args = append(args, p.PerKey)
	}
	r, err := s.run(ctx, claimFn, q.ready, args...).Slice()
	if err != nil {
		return nil, 0, wrap("claim", err)
	}
	ls, next, err := parseClaim(queue, r)
	if err != nil {
		return nil, 0, wrap("claim", err)
	}
	return ls, next, nil
}

// checkClaim returns what is wrong with p, if anything.
func checkClaim(p store.ClaimParams) error {
	switch {
	case p.Keys < 1:
		return fmt.Errorf("redisstore: ClaimParams.Keys is %d, want at least 1", p.Keys)
	case p.MaxBatch < 0:
		return fmt.Errorf("redisstore: ClaimParams.MaxBatch is %d, want 0 or more", p.MaxBatch)
	case p.TTL <= 0:
		return fmt.Errorf("redisstore: ClaimParams.TTL is %v, want more than 0", p.TTL)
	case p.PerKey < 0:
		return fmt.Errorf("redisstore: ClaimParams.PerKey is %d, want 0 or more", p.PerKey)
	}
	if err := p.KeyRate.Validate(); err != nil {
		return fmt.Errorf("redisstore: ClaimParams.%s", strings.TrimPrefix(err.Error(), "store: "))
	}
	return nil
}

// parseClaim reads claim.lua's reply. The leases and their values' slices
// are made once for the whole reply, in two allocations, whatever the
// number of leases.
func parseClaim(queue string, r []any) ([]store.Lease, time.Duration, error) {
	if len(r) == 0 {
		return nil, 0, errors.New("empty reply")
	}
	next, _ := r[0].(int64)
	leases, values, err := claimSize(r)
	if err != nil || leases == 0 {
		return nil, fromMicros(next), err
	}
	ls := make([]store.Lease, 0, leases)
	all := make([][]byte, values)
	for i := 1; i < len(r); {
		key, _ := r[i].(string)
		fence, _ := r[i+1].(int64)
		attempt, _ := r[i+2].(int64)
		count, _ := r[i+3].(int64)
		i += 4
		l := store.Lease{Queue: queue, Key: key, Attempt: int(attempt), Fence: uint64(fence), Values: all[:count:count]}
		all = all[count:]
		for j := range l.Values {
			e, _ := r[i+j].(string)
			at, v, err := unstamp(e)
			if err != nil {
				return nil, 0, fmt.Errorf("key %q: %w", key, err)
			}
			if j == 0 {
				l.First = at
			}
			l.Values[j] = v
		}
		i += int(count)
		ls = append(ls, l)
	}
	return ls, fromMicros(next), nil
}

// claimSize returns how many leases, and values in all, claim.lua's
// reply r holds, or what is wrong with it.
func claimSize(r []any) (leases, values int, err error) {
	for i := 1; i < len(r); {
		if i+4 > len(r) {
			return 0, 0, errors.New("short reply")
		}
		count, _ := r[i+3].(int64)
		i += 4
		if count < 1 || i+int(count) > len(r) {
			key, _ := r[i-4].(string)
			return 0, 0, fmt.Errorf("lease of %q with %d values", key, count)
		}
		i += int(count)
		leases++
		values += int(count)
	}
	return leases, values, nil
}
