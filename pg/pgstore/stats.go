package pgstore

import (
	"context"

	"github.com/pacerkit/pacer/store"
)

// Stats implements store.Store: one statement, which visits every key of
// queue.
func (s *Store) Stats(ctx context.Context, queue string) (store.Stats, error) {
	if err := s.begin(ctx, queue); err != nil {
		return store.Stats{}, err
	}
	var st store.Stats
	err := s.pool.QueryRow(ctx, s.q.stats, queue).Scan(
		&st.Values, &st.Keys, &st.Ready, &st.Pending, &st.Leased,
		&st.Retrying, &st.Behind, &st.Held, &st.HeldValues, &st.Dead, &st.PausedKeys, &st.Paused)
	if err != nil {
		return store.Stats{}, failed(ctx, "Stats", err)
	}
	return st, nil
}
