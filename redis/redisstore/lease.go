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
	q, err := s.queue(ctx, l.Queue)
	if err != nil {
		return err
	}
	if ttl <= 0 {
		return fmt.Errorf("redisstore: Extend ttl is %v, want more than 0", ttl)
	}
	ok, err := s.call(ctx, extendFn, q.hash(l.Key), q.prefix, l.Key, strconv.FormatUint(l.Fence, 10), micros(ttl)).Int()
	if err != nil {
		return wrap("extend", err)
	}
	if ok != 1 {
		return store.ErrLeaseLost
	}
	return nil
}
