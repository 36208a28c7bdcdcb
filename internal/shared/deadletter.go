package shared

import (
	"context"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// deadLetters returns the store's dead letters, or engine.ErrNoDeadLetters
// when it keeps none.
func (s *Engine[K, V]) deadLetters() (store.DeadLetters, error) {
	if dl, ok := s.st.(store.DeadLetters); ok {
		return dl, nil
	}
	return nil, engine.ErrNoDeadLetters
}

// DeadLetters implements engine.Engine when the store implements
// store.DeadLetters, as Redrive and Purge do.
// A dead letter whose key or values no longer decode is returned all the
// same, with DecodeErr and its raw bytes.
func (s *Engine[K, V]) DeadLetters(ctx context.Context, after uint64, limit int) ([]engine.DeadLetter[K, V], error) {
	dl, err := s.deadLetters()
	if err != nil {
		return nil, err
	}
	raw, err := dl.DeadLetters(ctx, s.name, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]engine.DeadLetter[K, V], len(raw))
	for i, d := range raw {
		out[i] = s.decodeDead(d)
	}
	return out, nil
}

// Redrive implements engine.Engine, as DeadLetters.
func (s *Engine[K, V]) Redrive(ctx context.Context, id uint64) (bool, error) {
	dl, err := s.deadLetters()
	if err != nil {
		return false, err
	}
	return dl.Redrive(ctx, s.name, id)
}

// Purge implements engine.Engine, as DeadLetters.
func (s *Engine[K, V]) Purge(ctx context.Context, before time.Time) (int, error) {
	dl, err := s.deadLetters()
	if err != nil {
		return 0, err
	}
	return dl.Purge(ctx, s.name, before)
}
