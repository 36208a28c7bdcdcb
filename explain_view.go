package pacer

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/pacerkit/pacer/internal/carrier"
	"github.com/pacerkit/pacer/internal/shared"
	"github.com/pacerkit/pacer/store"
)

// RunnerView is a Runner seen without its types K and V, for a tool that
// shows several Runners (a web console): it names the Runner's queue and
// store, explains a key given as stored, and shows stored keys and values
// as the Runner decodes them. Runner.View returns one. It is safe for
// concurrent use.
type RunnerView interface {
	// Queue is the Runner's queue in its store (Config.Name); "" without a
	// Config.Store.
	Queue() string
	// Store is the Runner's Config.Store; nil without one.
	Store() store.Store
	// Explain is Runner.Explain for the key that storedKey encodes. A
	// storedKey that does not decode returns an error that says so.
	Explain(ctx context.Context, storedKey string) (Explanation, error)
	// FormatKey returns the key that storedKey encodes as a person reads
	// it: a struct or an array as JSON, any other key as fmt's %v. A key
	// that does not decode shows as the quoted stored key and the error.
	FormatKey(storedKey string) string
	// FormatValue returns the value that stored encodes as a person reads
	// it: as indented JSON when it marshals, else as fmt's %v. A value
	// that does not decode shows as the error and the quoted bytes.
	FormatValue(stored []byte) string
}

// View returns r seen without its types, for tools. Without a
// Config.Store it reads keys and values as a Store's Runner would, with
// the default codecs (JSON for values, and keys of a string or an integer
// kind; other keys do not decode).
func (r *Runner[K, V]) View() RunnerView { return runnerView[K, V]{r} }

type runnerView[K comparable, V any] struct{ r *Runner[K, V] }

func (v runnerView[K, V]) Queue() string      { return v.r.cfg.Name }
func (v runnerView[K, V]) Store() store.Store { return v.r.cfg.Store }

func (v runnerView[K, V]) Explain(ctx context.Context, storedKey string) (Explanation, error) {
	k, err := v.r.decode.DecodeKey(storedKey)
	if err != nil {
		return Explanation{}, fmt.Errorf("pacer: stored key %q does not decode: %w", storedKey, err)
	}
	return v.r.Explain(ctx, k)
}

func (v runnerView[K, V]) FormatKey(storedKey string) string {
	k, err := v.r.decode.DecodeKey(storedKey)
	if err != nil {
		return fmt.Sprintf("%q (undecodable: %v)", storedKey, err)
	}
	return formatKey(k)
}

func (v runnerView[K, V]) FormatValue(stored []byte) string {
	val, err := v.r.decode.DecodeValue(stored)
	if err != nil {
		return fmt.Sprintf("undecodable: %v: %q", err, stored)
	}
	if b, err := json.MarshalIndent(val, "", "  "); err == nil {
		return string(b)
	}
	return fmt.Sprintf("%v", val)
}

// formatKey returns k as a person reads it: a struct or an array, whose
// %v hides the names of its fields, as JSON when it marshals; any other
// key as %v.
func formatKey[K comparable](k K) string {
	switch reflect.TypeFor[K]().Kind() {
	case reflect.Struct, reflect.Array:
		if b, err := json.Marshal(k); err == nil {
			return string(b)
		}
	}
	return fmt.Sprintf("%v", k)
}

// decoder reads keys and values as a Store keeps them.
type decoder[K comparable, V any] interface {
	DecodeKey(stored string) (K, error)
	DecodeValue(stored []byte) (V, error)
}

// newDecoder returns r's decoder: the shared engine's, which reads the
// bytes as its leases do; in the process, the default codecs.
func (r *Runner[K, V]) newDecoder() decoder[K, V] {
	if d, ok := r.engine.(*shared.Engine[K, V]); ok {
		return d
	}
	return defaultCodecs[K, V]{keys: keyCodec[K]()}
}

// defaultCodecs are the codecs a Runner with a Store would have by
// default.
type defaultCodecs[K comparable, V any] struct{ keys Codec[K] }

func (c defaultCodecs[K, V]) DecodeKey(stored string) (K, error) {
	if c.keys == nil {
		var zero K
		return zero, fmt.Errorf("pacer: keys of type %v have no stored form without Config.Store and Config.KeyCodec", reflect.TypeFor[K]())
	}
	return c.keys.Decode([]byte(stored))
}

// DecodeValue reads stored without the frame of what a value carries
// (Config.Carry), which JSON's bytes never begin like.
func (defaultCodecs[K, V]) DecodeValue(stored []byte) (V, error) {
	return JSON[V]{}.Decode(carrier.Strip(stored))
}
