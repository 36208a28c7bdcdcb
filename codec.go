package pacer

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
)

// A Codec turns values of type T into bytes and back. A Runner with a
// Config.Store uses one for its values (Config.Codec) and one for its keys
// (Config.KeyCodec), since the engine keeps bytes, possibly for other
// processes and for later versions of the program. Decode must accept what
// Encode produced, in every process sharing the store; a key codec must
// also be deterministic: equal keys encode to equal bytes. A Codec is
// called concurrently.
type Codec[T any] interface {
	Encode(v T) ([]byte, error)
	Decode(b []byte) (T, error)
}

// JSON is the Codec of encoding/json, the default Config.Codec. Its zero
// value is ready to use.
type JSON[T any] struct{}

// Encode returns v as JSON.
func (JSON[T]) Encode(v T) ([]byte, error) { return json.Marshal(v) }

// Decode reads a T from JSON.
func (JSON[T]) Decode(b []byte) (T, error) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}

// keyCodec returns the Codec of keys of type K that needs no
// configuration: a string kind as itself, an integer kind in decimal. It
// returns nil for any other kind.
func keyCodec[K comparable]() Codec[K] {
	t := reflect.TypeFor[K]()
	switch t.Kind() {
	case reflect.String:
		return stringKey[K]{t}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intKey[K]{t}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintKey[K]{t}
	}
	return nil
}

// The key codecs go through reflect so that named types (type UserID
// string) work too; their cost is small next to the engine's round trip.

type stringKey[K comparable] struct{ t reflect.Type }

func (stringKey[K]) Encode(k K) ([]byte, error) { return []byte(reflect.ValueOf(k).String()), nil }

func (c stringKey[K]) Decode(b []byte) (K, error) { return c.DecodeString(string(b)) }

// DecodeString is Decode for a key stored as a string, which an engine
// that reads keys as strings calls rather than making bytes of it (see
// shared.StringDecoder).
func (c stringKey[K]) DecodeString(s string) (K, error) {
	if k, ok := any(s).(K); ok { // K is string: no reflect
		return k, nil
	}
	v := reflect.New(c.t).Elem()
	v.SetString(s)
	return v.Interface().(K), nil
}

type intKey[K comparable] struct{ t reflect.Type }

func (intKey[K]) Encode(k K) ([]byte, error) {
	return strconv.AppendInt(nil, reflect.ValueOf(k).Int(), 10), nil
}

func (c intKey[K]) Decode(b []byte) (K, error) {
	n, err := strconv.ParseInt(string(b), 10, c.t.Bits())
	if err != nil {
		var zero K
		return zero, fmt.Errorf("pacer: key %q is not a %v: %w", b, c.t, err)
	}
	v := reflect.New(c.t).Elem()
	v.SetInt(n)
	return v.Interface().(K), nil
}

type uintKey[K comparable] struct{ t reflect.Type }

func (uintKey[K]) Encode(k K) ([]byte, error) {
	return strconv.AppendUint(nil, reflect.ValueOf(k).Uint(), 10), nil
}

func (c uintKey[K]) Decode(b []byte) (K, error) {
	n, err := strconv.ParseUint(string(b), 10, c.t.Bits())
	if err != nil {
		var zero K
		return zero, fmt.Errorf("pacer: key %q is not a %v: %w", b, c.t, err)
	}
	v := reflect.New(c.t).Elem()
	v.SetUint(n)
	return v.Interface().(K), nil
}
