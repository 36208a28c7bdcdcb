package redisstore

import (
	"context"
	"fmt"
	"time"

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
	st, _, err := s.stats(ctx, q, 0)
	return st, err
}

// stats is Stats of q and, with oldest > 0, when the oldest value of the
// first oldest keys of the ready order was added (zero if none is ready).
func (s *Store) stats(ctx context.Context, q *queue, oldest int) (store.Stats, time.Time, error) {
	r, err := s.run(ctx, statsFn, q.ready, q.prefix, oldest).Int64Slice()
	if err != nil {
		return store.Stats{}, time.Time{}, wrap("stats", err)
	}
	want := 12
	if oldest > 0 {
		want++
	}
	if len(r) != want {
		return store.Stats{}, time.Time{}, wrap("stats", fmt.Errorf("reply of %d counts", len(r)))
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
		PausedKeys: int(r[10]),
		Paused:     r[11] == 1,
	}
	var at time.Time
	if oldest > 0 && r[12] > 0 {
		at = time.UnixMicro(r[12])
	}
	return st, at, nil
}
