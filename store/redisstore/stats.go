package redisstore

import (
	"context"
	"fmt"

	"github.com/pacerkit/pacer/store"
)

// Stats counts queue at one instant, in one script; see store.Store.
func (s *Store) Stats(ctx context.Context, queue string) (store.Stats, error) {
	n, err := s.names(ctx, queue)
	if err != nil {
		return store.Stats{}, err
	}
	r, err := s.run(ctx, statsScript, n, nil).Int64Slice()
	if err != nil {
		return store.Stats{}, wrap("stats", err)
	}
	if len(r) != 10 {
		return store.Stats{}, wrap("stats", fmt.Errorf("reply of %d counts", len(r)))
	}
	st := store.Stats{
		Values:     int(r[0]),
		Ready:      int(r[1]),
		Pending:    int(r[2]),
		Leased:     int(r[3]),
		Retrying:   int(r[4]),
		Behind:     int(r[5]),
		Held:       int(r[6]),
		HeldValues: int(r[7]),
		Dead:       int(r[8]),
		Keys:       int(r[9]),
	}
	return st, nil
}
