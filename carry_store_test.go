package pacer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pacerkit/pacer"
	"github.com/pacerkit/pacer/store"
)

// traceTag is as long as the trace context the otel module carries: a
// version, a trace ID, a span ID and the flags.
var traceTag = string(append([]byte{0}, bytes.Repeat([]byte("t"), 25)...))

// storedCall is what a handler on a store saw of a batch.
type storedCall[V any] struct {
	batch   []V
	carried []string // "-" for nil; nil when the ctx carries no slice
}

// handleOn runs a Runner configured by cfg until the values stored in its
// queue are handled, failing each batch's first attempt, and returns its
// calls. It runs in a synctest bubble.
func handleOn[V any](t *testing.T, cfg pacer.Config[string, V]) []storedCall[V] {
	t.Helper()
	var mu sync.Mutex
	var calls []storedCall[V]
	cfg.Debounce = 0
	r, err := pacer.New(cfg, func(ctx context.Context, _ string, batch []V) error {
		mu.Lock()
		defer mu.Unlock()
		c := storedCall[V]{batch: slices.Clone(batch)}
		if pacer.Carried(ctx) != nil {
			c.carried = carriedStrings(ctx)
		}
		calls = append(calls, c)
		if pacer.Attempt(ctx) == 1 {
			return errors.New("once")
		}
		return nil
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	ctx, stop := context.WithCancel(context.Background())
	go func() { done <- r.Run(ctx) }()
	time.Sleep(time.Minute) // the batch, its retry a second later
	stop()
	require.ErrorIs(t, <-done, context.Canceled)
	require.NoError(t, r.Shutdown(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	return calls
}

// addOn adds v to key through a Runner configured by cfg, an instance
// that never runs, with ctx carrying tag unless it is "".
func addOn[V any](t *testing.T, cfg pacer.Config[string, V], tag string, key string, vs ...V) {
	t.Helper()
	r, err := pacer.New(cfg, func(context.Context, string, []V) error {
		t.Error("the adding instance handled a batch")
		return nil
	})
	require.NoError(t, err)
	ctx := context.Background()
	if tag != "" {
		ctx = tagged(tag)
	}
	for _, v := range vs {
		require.NoError(t, r.Add(ctx, key, v))
	}
	require.NoError(t, r.Shutdown(context.Background()))
}

// A value added on one instance is handled on another, with its bytes,
// which its retry carries too.
func TestCarryAcrossInstances(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := pacer.Config[string, int]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q", Carry: tagOf, Debounce: time.Second}
		addOn(t, cfg, "a", "k", 1)
		addOn(t, cfg, "", "k", 2)
		addOn(t, cfg, traceTag, "k", 3)
		want := storedCall[int]{[]int{1, 2, 3}, []string{"a", "-", traceTag}}
		require.Equal(t, []storedCall[int]{want, want}, handleOn(t, cfg))
	})
}

// A value grows in the store by the frame, at most 60 bytes, only with
// Carry; without, it is the Codec's bytes.
func TestCarryStoredSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type order struct {
			ID   int    `json:"id"`
			Note string `json:"note"`
		}
		v := order{ID: 42, Note: "ship"}
		plain, err := json.Marshal(v)
		require.NoError(t, err)
		s := store.NewMemory(store.MemoryConfig{})
		for _, tc := range []struct {
			key   string
			carry func(context.Context) []byte
			tag   string
			grows int
		}{
			{"off", nil, traceTag, 0},
			{"on", tagOf, traceTag, 2 + len(traceTag)},
			{"on, nothing carried", tagOf, "", 0},
			{"on, the most carried", tagOf, string(make([]byte, 58)), 60},
		} {
			addOn(t, pacer.Config[string, order]{Store: s, Name: "q", Carry: tc.carry}, tc.tag, tc.key, v)
			vals, err := s.Values(context.Background(), "q", tc.key, 10)
			require.NoError(t, err)
			require.Len(t, vals, 1)
			require.Len(t, vals[0].Value, len(plain)+tc.grows, tc.key)
			require.LessOrEqual(t, tc.grows, 60)
		}
	})
}

// Carry may not return more than a stored value carries.
func TestCarryTooLongForStore(t *testing.T) {
	r, err := pacer.New(pacer.Config[string, int]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q", Carry: tagOf},
		func(context.Context, string, []int) error { return nil })
	require.NoError(t, err)
	err = r.Add(tagged(string(make([]byte, 59))), "k", 1)
	require.EqualError(t, err, "pacer: Config.Carry returned 59 bytes, more than the 58 a stored value carries")
	require.NoError(t, r.Shutdown(context.Background()))
}

// carryRoundTrip adds v with Carry on one instance and handles it on another,
// once carrying tag and once nothing, and checks that the value and the
// bytes come back.
func carryRoundTrip[V any](t *testing.T, codec pacer.Codec[V], v V) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		cfg := pacer.Config[string, V]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q", Codec: codec, Carry: tagOf}
		addOn(t, cfg, traceTag, "k", v)
		addOn(t, cfg, "", "k", v)
		want := storedCall[V]{[]V{v, v}, []string{traceTag, "-"}}
		require.Equal(t, []storedCall[V]{want, want}, handleOn(t, cfg))
	})
}

// rawBytes is a Codec that stores a []byte as it is: any bytes decode,
// those that begin with the frame's marker too.
type rawBytes struct{}

func (rawBytes) Encode(v []byte) ([]byte, error) { return v, nil }
func (rawBytes) Decode(b []byte) ([]byte, error) { return slices.Clone(b), nil }

// The frame round-trips through the root's Codec, JSON, for values of
// any shape, and through a Codec whose bytes begin like a frame.
func TestCarryCodecs(t *testing.T) {
	type nested struct {
		A string         `json:"a"`
		B []int          `json:"b"`
		C map[string]int `json:"c"`
	}
	t.Run("JSON int", func(t *testing.T) { carryRoundTrip(t, pacer.JSON[int]{}, -7) })
	t.Run("JSON string", func(t *testing.T) { carryRoundTrip(t, pacer.JSON[string]{}, "ÿ (U+00FF) is 0xC3 0xBF in UTF-8") })
	t.Run("JSON struct", func(t *testing.T) {
		carryRoundTrip(t, pacer.JSON[nested]{}, nested{A: "x", B: []int{1, 2}, C: map[string]int{"y": 3}})
	})
	t.Run("JSON bytes", func(t *testing.T) { carryRoundTrip(t, pacer.JSON[[]byte]{}, []byte{0xFF, 0, 0xFF}) })
	t.Run("JSON null", func(t *testing.T) { carryRoundTrip[*nested](t, pacer.JSON[*nested]{}, nil) })
	t.Run("raw, beginning with the marker", func(t *testing.T) { carryRoundTrip(t, rawBytes{}, []byte{0xFF, 1, 2, 3}) })
	t.Run("raw, marker alone", func(t *testing.T) { carryRoundTrip(t, rawBytes{}, []byte{0xFF}) })
	t.Run("raw, empty", func(t *testing.T) { carryRoundTrip(t, rawBytes{}, []byte{}) })
}

// Carry can be turned on or off over a queue that holds values: each
// Runner reads what the other stored.
func TestCarryTurnedOnOrOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.NewMemory(store.MemoryConfig{})
		on := pacer.Config[string, int]{Store: s, Name: "on", Carry: tagOf}
		off := pacer.Config[string, int]{Store: s, Name: "on"}
		// Stored without Carry, read with it: the values carry nothing.
		addOn(t, off, traceTag, "k", 1, 2)
		want := storedCall[int]{[]int{1, 2}, []string{"-", "-"}}
		require.Equal(t, []storedCall[int]{want, want}, handleOn(t, on))
		// Stored with Carry, read without: the values, nothing carried.
		addOn(t, on, traceTag, "k", 3)
		addOn(t, on, "", "k", 4)
		want = storedCall[int]{batch: []int{3, 4}}
		require.Equal(t, []storedCall[int]{want, want}, handleOn(t, off))
	})
}

// Without Carry, a Codec's bytes that begin like a frame are never read as
// one: they are the value.
func TestCarryOffNeverFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := pacer.Config[string, []byte]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q", Codec: rawBytes{}}
		v := []byte{0xFF, 1, 'x', 'y'} // a frame carrying "x", of the payload "y"
		addOn(t, cfg, traceTag, "k", v)
		want := storedCall[[]byte]{batch: [][]byte{v}}
		require.Equal(t, []storedCall[[]byte]{want, want}, handleOn(t, cfg))
	})
}

// A Runner's view shows a value stored with what it carries as the value
// alone, with a Store and without.
func TestCarryViewShowsValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := store.NewMemory(store.MemoryConfig{})
		cfg := pacer.Config[string, int]{Store: s, Name: "q", Carry: tagOf}
		addOn(t, cfg, traceTag, "k", 42)
		vals, err := s.Values(context.Background(), "q", "k", 1)
		require.NoError(t, err)
		require.Len(t, vals[0].Value, len("42")+2+len(traceTag))
		for _, cfg := range []pacer.Config[string, int]{cfg, {Store: s, Name: "q"}, {}} {
			r, err := pacer.New(cfg, func(context.Context, string, []int) error { return nil })
			require.NoError(t, err)
			require.Equal(t, "42", r.View().FormatValue(vals[0].Value))
			require.NoError(t, r.Shutdown(context.Background()))
		}
	})
}

// A value added to come due later carries its bytes too.
func TestCarryAddAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := pacer.Config[string, int]{Store: store.NewMemory(store.MemoryConfig{}), Name: "q", Carry: tagOf}
		r, err := pacer.New(cfg, func(context.Context, string, []int) error { return nil })
		require.NoError(t, err)
		require.NoError(t, r.AddAfter(tagged(traceTag), "k", 1, time.Second))
		require.NoError(t, r.Shutdown(context.Background()))
		want := storedCall[int]{[]int{1}, []string{traceTag}}
		require.Equal(t, []storedCall[int]{want, want}, handleOn(t, cfg))
	})
}
