package shared

import (
	"context"
	"fmt"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// Key implements engine.Engine when the store implements store.Inspector;
// otherwise it returns engine.ErrNoInspector. It reads the key, then the
// queue's Stats for whether the queue is paused: two calls, so the two
// may be a moment apart.
func (s *Engine[K, V]) Key(ctx context.Context, key K) (engine.KeyState, error) {
	in, ok := s.st.(store.Inspector)
	if !ok {
		return engine.KeyState{}, engine.ErrNoInspector
	}
	k, err := s.keys.Encode(key)
	if err != nil {
		return engine.KeyState{}, fmt.Errorf("pacer: Config.KeyCodec cannot encode key %v: %w", key, err)
	}
	info, found, err := in.Key(ctx, s.name, string(k))
	if err != nil {
		return engine.KeyState{}, err
	}
	st, err := s.st.Stats(ctx, s.name)
	if err != nil {
		return engine.KeyState{}, err
	}
	info.Key = string(k) // also when not found
	return engine.KeyState{Info: info, Found: found, QueuePaused: st.Paused}, nil
}
