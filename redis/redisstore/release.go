package redisstore

import "context"

// Release puts a held key back in the ready order, at the tail, with its
// attempts started over, in one script; see store.Store.
func (s *Store) Release(ctx context.Context, queue, key string) (bool, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return false, err
	}
	r, err := s.run(ctx, releaseFn, q.hash(key), q.prefix, key).Int()
	if err != nil {
		return false, wrap("release", err)
	}
	return r == 1, nil
}
