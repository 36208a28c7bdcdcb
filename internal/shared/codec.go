package shared

import (
	"fmt"
	"time"

	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// A Codec turns values of type T into bytes and back; pacer.Codec is one.
type Codec[T any] interface {
	Encode(v T) ([]byte, error)
	Decode(b []byte) (T, error)
}

// encode encodes key and its values for the store, with the Runner's codecs.
func (s *Engine[K, V]) encode(key K, vs ...V) (string, [][]byte, error) {
	k, err := s.keys.Encode(key)
	if err != nil {
		return "", nil, fmt.Errorf("pacer: Config.KeyCodec cannot encode key %v: %w", key, err)
	}
	vals := make([][]byte, len(vs))
	for i, v := range vs {
		if vals[i], err = s.codec.Encode(v); err != nil {
			return "", nil, fmt.Errorf("pacer: Config.Codec cannot encode a value of key %v: %w", key, err)
		}
	}
	return string(k), vals, nil
}

// decode turns a store's lease, claimed at at, into a typed one. What
// does not decode is reported in the lease's Err, for the Runner to drop
// the batch: a value that will never decode must not come back forever.
func (s *Engine[K, V]) decode(l store.Lease, at time.Time) engine.Lease[K, V] {
	out := engine.Lease[K, V]{Attempt: l.Attempt, Remote: &engine.Remote{Lease: l, Claimed: at, Deadline: engine.NewDeadline(at, s.ttl)}}
	out.Key, out.Values, out.Remote.Err = s.decodeBatch(l.Key, l.Values, "values of the batch")
	return out
}

// decodeDead turns a stored dead letter into a typed one, keeping the
// values that decode and saying why the others did not.
func (s *Engine[K, V]) decodeDead(d store.DeadLetter) engine.DeadLetter[K, V] {
	out := engine.DeadLetter[K, V]{ID: d.ID, Err: d.Err, Attempt: d.Attempt, At: d.At, Raw: d}
	out.Key, out.Values, out.DecodeErr = s.decodeBatch(d.Key, d.Values, "values")
	return out
}

// decodeBatch decodes a key and its values as stored. It returns the
// values that decode, and an error wrapping engine.ErrUndecodable that
// says which did not, the first of them (of, in the message) or the key.
func (s *Engine[K, V]) decodeBatch(key string, vals [][]byte, of string) (K, []V, error) {
	vs := make([]V, 0, len(vals))
	bad, at0, err0 := 0, 0, error(nil)
	for i, b := range vals {
		v, err := s.DecodeValue(b)
		if err != nil {
			if bad++; bad == 1 {
				at0, err0 = i, err
			}
			continue
		}
		vs = append(vs, v)
	}
	k, err := s.DecodeKey(key)
	switch {
	case err != nil:
		return k, vs, fmt.Errorf("%w: key %q: %w", engine.ErrUndecodable, key, err)
	case bad > 0:
		return k, vs, fmt.Errorf("%w: %d of %d %s, the first at index %d: %w", engine.ErrUndecodable, bad, len(vals), of, at0, err0)
	}
	return k, vs, nil
}

// DecodeKey decodes a key as stored, with the Runner's key codec.
func (s *Engine[K, V]) DecodeKey(stored string) (K, error) {
	return s.keys.Decode([]byte(stored))
}

// DecodeValue decodes a value as stored, with the Runner's codec: what a
// tool that shows a stored value calls, so that it reads the bytes as the
// Runner's leases do.
func (s *Engine[K, V]) DecodeValue(stored []byte) (V, error) {
	return s.codec.Decode(stored)
}
