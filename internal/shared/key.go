package shared

import (
	"context"
	"fmt"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// Key implements engine.Engine when the store implements store.Inspector;
// otherwise it returns engine.ErrNoInspector. It reads the key, then
// whether the queue is paused: store.Operator's QueuePaused, or, from a
// store that is no Operator, its Stats. Two calls, so the two may be a
// moment apart.
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
	var paused bool
	if op, ok := s.st.(store.Operator); ok {
		paused, err = op.QueuePaused(ctx, s.name)
	} else {
		var st store.Stats
		st, err = s.st.Stats(ctx, s.name)
		paused = st.Paused
	}
	if err != nil {
		return engine.KeyState{}, err
	}
	info.Key = string(k) // also when not found
	return engine.KeyState{Info: info, Found: found, QueuePaused: paused}, nil
}
