package pacer

import (
	"context"
	"fmt"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// deadLetters returns the engine's dead letters, or engine.ErrNoDeadLetters
// when it keeps none.
func (s *sharedStore[K, V]) deadLetters() (store.DeadLetters, error) {
	if dl, ok := s.st.(store.DeadLetters); ok {
		return dl, nil
	}
	return nil, engine.ErrNoDeadLetters
}

// DeadLetters implements engine.Engine with the engine's store.DeadLetters.
// A dead letter whose key or values no longer decode is returned all the
// same, with DecodeErr and its raw bytes.
func (s *sharedStore[K, V]) DeadLetters(ctx context.Context, after uint64, limit int) ([]engine.DeadLetter[K, V], error) {
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

// decodeDead turns a stored dead letter into a typed one, keeping the
// values that decode and saying why the others did not.
func (s *sharedStore[K, V]) decodeDead(d store.DeadLetter) engine.DeadLetter[K, V] {
	out := engine.DeadLetter[K, V]{ID: d.ID, Err: d.Err, Attempt: d.Attempt, At: d.At, Raw: d}
	out.Values = make([]V, 0, len(d.Values))
	bad, at0, err0 := 0, 0, error(nil)
	for i, b := range d.Values {
		v, err := s.codec.Decode(b)
		if err != nil {
			if bad++; bad == 1 {
				at0, err0 = i, err
			}
			continue
		}
		out.Values = append(out.Values, v)
	}
	key, err := s.keys.Decode([]byte(d.Key))
	switch {
	case err != nil:
		out.DecodeErr = fmt.Errorf("%w: key %q: %w", ErrUndecodable, d.Key, err)
	case bad > 0:
		out.DecodeErr = fmt.Errorf("%w: %d of %d values, the first at index %d: %w", ErrUndecodable, bad, len(d.Values), at0, err0)
	}
	out.Key = key
	return out
}

// Redrive implements engine.Engine with the engine's store.DeadLetters.
func (s *sharedStore[K, V]) Redrive(ctx context.Context, id uint64) (bool, error) {
	dl, err := s.deadLetters()
	if err != nil {
		return false, err
	}
	return dl.Redrive(ctx, s.name, id)
}

// Purge implements engine.Engine with the engine's store.DeadLetters.
func (s *sharedStore[K, V]) Purge(ctx context.Context, before time.Time) (int, error) {
	dl, err := s.deadLetters()
	if err != nil {
		return 0, err
	}
	return dl.Purge(ctx, s.name, before)
}
