package redisstore

import (
	"context"
	"fmt"

	"github.com/pacerkit/pacer/store"
)

// Stats counts queue at one instant, in one script, after folding the
// Adds of the inbox; see store.Store. It costs O(log n) in the keys of
// the queue, and O(1) more per held or delayed key.
func (s *Store) Stats(ctx context.Context, queue string) (store.Stats, error) {
	q, err := s.queue(ctx, queue)
	if err != nil {
		return store.Stats{}, err
	}
	r, err := s.run(ctx, statsFn, q.ready, q.prefix).Int64Slice()
	if err != nil {
		return store.Stats{}, wrap("stats", err)
	}
	if len(r) != 10 {
		return store.Stats{}, wrap("stats", fmt.Errorf("reply of %d counts", len(r)))
	}
	st := store.Stats{
		Values:     int(r[0]),
		Keys:       int(r[1]),
		Ready:      int(r[2]),
		Pending:    int(r[3]),
		Leased:     int(r[4]),
		Retrying:   int(r[5]),
		Behind:     int(r[6]),
		Held:       int(r[7]),
		HeldValues: int(r[8]),
		Dead:       int(r[9]),
	}
	return st, nil
}
