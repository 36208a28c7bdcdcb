package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/pacerkit/pacer/store"
)

// Extend renews l for ttl from now, on the server's clock, in one script
// that checks its fence and expiry first; see store.Store.
func (s *Store) Extend(ctx context.Context, l store.Lease, ttl time.Duration) error {
	n, err := s.names(ctx, l.Queue)
	if err != nil {
		return err
	}
	if ttl <= 0 {
		return fmt.Errorf("redisstore: Extend ttl is %v, want more than 0", ttl)
	}
	ok, err := s.run(ctx, extendScript, n, n.hash(l.Key), l.Key, strconv.FormatUint(l.Fence, 10), micros(ttl)).Int()
	if err != nil {
		return wrap("extend", err)
	}
	if ok != 1 {
		return store.ErrLeaseLost
	}
	return nil
}

// Finish ends l as o says, in one script that checks its fence and expiry
// first; see store.Store. A dropped batch becomes a dead letter.
func (s *Store) Finish(ctx context.Context, l store.Lease, o store.Outcome) (bool, error) {
	n, err := s.names(ctx, l.Queue)
	if err != nil {
		return false, err
	}
	if o.Kind < store.Ack || o.Kind > store.Hold {
		return false, fmt.Errorf("redisstore: Finish with unknown outcome kind %d", o.Kind)
	}
	r, err := s.run(ctx, finishScript, n, n.key(l.Key), l.Key, strconv.FormatUint(l.Fence, 10), int(o.Kind), micros(o.After), o.Err).Int()
	if err != nil {
		return false, wrap("finish", err)
	}
	if r < 0 {
		return false, store.ErrLeaseLost
	}
	return r == 1, nil
}
