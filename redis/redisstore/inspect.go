package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pacerkit/pacer/store"
)

// Key returns what key of queue is doing, in one script that folds the
// Adds of the inbox first; see store.Inspector. It costs O(log n) in the
// keys of the queue, and for a ready key's Ahead O(1) more per paused key
// of the queue (with more than 1,000 paused, Ahead counts too the paused
// keys that came due and no Claim or Stats set aside yet); with tenants,
// a ready key's TenantsAhead costs O(1) more per tenant before its
// tenant's in the turns, up to store.MaxAhead (plus those a pause or a
// drop left without ready keys, which the next Claim that comes to them
// takes out of the turns), and O(1) per key that came due and that no
// Claim moved into the ready order yet, up to 1,000 of each kind (the
// tenants of the others are left out until a Claim moves them). A tenant
// whose ready keys were all paused before they came ready still counts,
// until a Claim that comes to it sets them aside.
func (s *Store) Key(ctx context.Context, queue, key string) (store.KeyInfo, bool, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return store.KeyInfo{}, false, err
	}
	r, err := s.run(ctx, keyFn, q.hash(key), q.prefix, key, store.MaxAhead).Result()
	if errors.Is(err, redis.Nil) {
		return store.KeyInfo{}, false, nil
	}
	if err != nil {
		return store.KeyInfo{}, false, wrap("key", err)
	}
	info, err := parseKeyInfo(r)
	if err != nil {
		return store.KeyInfo{}, false, wrap("key", err)
	}
	return info, true, nil
}

// Values returns up to limit of key's values from its head, in one script
// that folds the Adds of the inbox first; see store.Inspector. It costs
// O(limit).
func (s *Store) Values(ctx context.Context, queue, key string, limit int) ([]store.StoredValue, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	r, err := s.run(ctx, valuesFn, q.values(key), q.prefix, limit).StringSlice()
	if err != nil {
		return nil, wrap("values", err)
	}
	out := make([]store.StoredValue, len(r))
	for i, e := range r {
		at, v, err := unstamp(e)
		if err != nil {
			return nil, wrap("values", fmt.Errorf("key %q: %w", key, err))
		}
		out[i] = store.StoredValue{Value: v, Added: at}
	}
	return out, nil
}

// parseKeyInfo reads a key's info as lib_inspect.lua's key_info replies
// it: {key, state, since, until, maxwait, attempt, fence, holder, error,
// values, oldest, ahead, paused, leases, tenants ahead, for token}.
func parseKeyInfo(r any) (store.KeyInfo, error) {
	f, ok := r.([]any)
	if !ok || len(f) != 16 {
		return store.KeyInfo{}, fmt.Errorf("key info of %T %d long", r, len(f))
	}
	var info store.KeyInfo
	var maxWait, state, attempt, fence, values, ahead, paused, leases, tenants, token int64
	var since, until, oldest string
	for i, p := range []any{&info.Key, &state, &since, &until, &maxWait, &attempt, &fence, &info.Holder, &info.Err, &values, &oldest, &ahead, &paused, &leases, &tenants, &token} {
		var ok bool
		switch p := p.(type) {
		case *string:
			*p, ok = f[i].(string)
		case *int64:
			*p, ok = f[i].(int64)
		}
		if !ok {
			return store.KeyInfo{}, fmt.Errorf("key info field %d is %T", i, f[i])
		}
	}
	var err error
	if info.Since, err = parseTime(since); err != nil {
		return store.KeyInfo{}, err
	}
	if info.Until, err = parseTime(until); err != nil {
		return store.KeyInfo{}, err
	}
	if info.Oldest, err = parseTime(oldest); err != nil {
		return store.KeyInfo{}, err
	}
	info.State = store.KeyState(state)
	info.MaxWait = maxWait == 1
	info.Attempt, info.Fence, info.Values = int(attempt), uint64(fence), int(values)
	info.Ahead, info.Paused, info.Leases, info.TenantsAhead = int(ahead), paused == 1, int(leases), int(tenants)
	info.ForToken = token == 1
	return info, nil
}

// parseTime reads a time of the scripts, in microseconds, as they store it
// or as a ZSET's score replies it; "" and "inf" (never) read as zero.
func parseTime(s string) (time.Time, error) {
	if s == "" || s == "inf" {
		return time.Time{}, nil
	}
	if us, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMicro(us), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return time.Time{}, fmt.Errorf("bad time %q", s)
	}
	return time.UnixMicro(int64(f)), nil
}
