package shared

import (
	"context"
	"fmt"
	"time"

	"github.com/pacerkit/pacer/internal/carrier"
	"github.com/pacerkit/pacer/internal/engine"
	"github.com/pacerkit/pacer/store"
)

// A Codec turns values of type T into bytes and back; pacer.Codec is one.
type Codec[T any] interface {
	Encode(v T) ([]byte, error)
	Decode(b []byte) (T, error)
}

// encode encodes key and its value v for the store, with the Runner's
// codecs. With Config.Carry, the value is framed with what Carry returns
// for ctx, the ctx of its Add (see package carrier); without, it is the
// Codec's bytes alone.
func (s *Engine[K, V]) encode(ctx context.Context, key K, v V) (string, [][]byte, error) {
	k, err := s.keys.Encode(key)
	if err != nil {
		return "", nil, fmt.Errorf("pacer: Config.KeyCodec cannot encode key %v: %w", key, err)
	}
	b, err := s.codec.Encode(v)
	if err != nil {
		return "", nil, fmt.Errorf("pacer: Config.Codec cannot encode a value of key %v: %w", key, err)
	}
	if s.carry != nil {
		c := s.carry(ctx)
		if !carrier.Fits(c) {
			return "", nil, fmt.Errorf("pacer: Config.Carry returned %d bytes, more than the %d a stored value carries", len(c), carrier.MaxCarried)
		}
		b = carrier.Frame(c, b)
	}
	return string(k), [][]byte{b}, nil
}

// decodeCarried decodes a stored value, and returns the bytes it carries
// when the Runner carries (Config.Carry). A value is read the way the
// Runner writes them first, and the other way only when that fails, so
// that a queue's values stay readable when Carry is turned on or off:
//
//   - with Carry, a framed value (carrier.Split) is its payload, and any
//     other is the Codec's bytes whole, stored by a Runner without Carry,
//     or carrying nothing; a framed value whose payload does not decode is
//     tried whole, in case it was stored without Carry and only looks
//     framed;
//   - without Carry, a value is the Codec's bytes whole, so that they are
//     never mistaken for a frame; only when they do not decode and are
//     framed (stored by a Runner with Carry) is the payload decoded, and
//     what it carries dropped.
//
// The error is that of the first reading.
func (s *Engine[K, V]) decodeCarried(b []byte) (V, []byte, error) {
	if s.carry == nil {
		v, err := s.codec.Decode(b)
		if err != nil {
			if _, payload, framed := carrier.Split(b); framed {
				if v, err2 := s.codec.Decode(payload); err2 == nil {
					return v, nil, nil
				}
			}
		}
		return v, nil, err
	}
	carried, payload, framed := carrier.Split(b)
	v, err := s.codec.Decode(payload)
	if err != nil && framed {
		if v, err2 := s.codec.Decode(b); err2 == nil {
			return v, nil, nil
		}
	}
	return v, carried, err
}

// decode turns a store's lease, claimed at at, into a typed one. What
// does not decode is reported in the lease's Err, for the Runner to drop
// the batch: a value that will never decode must not come back forever.
func (s *Engine[K, V]) decode(l store.Lease, at time.Time) engine.Lease[K, V] {
	return s.typed(s.claimed(l, at))
}

// claimed is a store's lease, claimed at at, with its deadline but its
// key and values not decoded yet: how a lease waits in the handoff. The
// worker that takes it decodes it (typed), on its own goroutine: a
// call's goroutine, new for each call, would grow its stack to decode
// (encoding/json's frames are large), which cost more than the decoding.
func (s *Engine[K, V]) claimed(l store.Lease, at time.Time) engine.Lease[K, V] {
	return engine.Lease[K, V]{Attempt: l.Attempt, Remote: engine.NewRemote(l, at, s.ttl)}
}

// typed decodes the key and the values of a claimed lease l.
func (s *Engine[K, V]) typed(l engine.Lease[K, V]) engine.Lease[K, V] {
	r := l.Remote.Lease
	l.Key, l.Values, l.Carried, l.Remote.Err = s.decodeBatch(r.Key, r.Values, "values of the batch")
	return l
}

// decodeDead turns a stored dead letter into a typed one, keeping the
// values that decode and saying why the others did not.
func (s *Engine[K, V]) decodeDead(d store.DeadLetter) engine.DeadLetter[K, V] {
	out := engine.DeadLetter[K, V]{ID: d.ID, Err: d.Err, Attempt: d.Attempt, At: d.At, Raw: d}
	out.Key, out.Values, _, out.DecodeErr = s.decodeBatch(d.Key, d.Values, "values")
	return out
}

// decodeBatch decodes a key and its values as stored. It returns the
// values that decode, with the Runner's Config.Carry the bytes each of
// them carries (nil without), and an error wrapping engine.ErrUndecodable
// that says which did not, the first of them (of, in the message) or the
// key.
func (s *Engine[K, V]) decodeBatch(key string, vals [][]byte, of string) (K, []V, [][]byte, error) {
	vs := make([]V, 0, len(vals))
	var carried [][]byte
	if s.carry != nil {
		carried = make([][]byte, 0, len(vals))
	}
	bad, at0, err0 := 0, 0, error(nil)
	for i, b := range vals {
		v, c, err := s.decodeCarried(b)
		if err != nil {
			if bad++; bad == 1 {
				at0, err0 = i, err
			}
			continue
		}
		vs = append(vs, v)
		if carried != nil {
			carried = append(carried, c)
		}
	}
	k, err := s.DecodeKey(key)
	switch {
	case err != nil:
		return k, vs, carried, fmt.Errorf("%w: key %q: %w", engine.ErrUndecodable, key, err)
	case bad > 0:
		return k, vs, carried, fmt.Errorf("%w: %d of %d %s, the first at index %d: %w", engine.ErrUndecodable, bad, len(vals), of, at0, err0)
	}
	return k, vs, carried, nil
}

// A StringDecoder is a key codec that decodes a key stored as a string
// without the copy that making bytes of it takes: pacer's codec of keys
// of a string kind is one.
type StringDecoder[K any] interface {
	DecodeString(s string) (K, error)
}

// DecodeKey decodes a key as stored, with the Runner's key codec.
func (s *Engine[K, V]) DecodeKey(stored string) (K, error) {
	if d, ok := s.keys.(StringDecoder[K]); ok {
		return d.DecodeString(stored)
	}
	return s.keys.Decode([]byte(stored))
}

// DecodeValue decodes a value as stored, with the Runner's codec: what a
// tool that shows a stored value calls, so that it reads the bytes as the
// Runner's leases do, without the frame of what the value carries.
func (s *Engine[K, V]) DecodeValue(stored []byte) (V, error) {
	v, _, err := s.decodeCarried(stored)
	return v, err
}
